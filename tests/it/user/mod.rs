//! `--user`: in use, on the terminal, and against Debian's gosu.

mod caps;
mod gosu;
mod run;
mod terminal;
