//! Every parser of input from outside vigil (its command line and
//! environment, /proc, /etc, cgroupfs), for the fuzz targets in fuzz/: the
//! modules stay private to the crate, and this is the one door into them.
//! The targets call the very functions vigil calls.

pub use crate::caps::parse as caps;
pub use crate::cgroup::{count, counter_file, own_cgroup, parse_events};
pub use crate::cli::options::OPTIONS;
pub use crate::cli::values::{
    From, parse_bool as switch, parse_exit_code as exit_code, parse_stop_signals as stop_signals,
    parse_verbosity as verbosity, read as option_value,
};
pub use crate::cli::{
    Action, Config, UsageError, log_format_before, parse as cli, probe_asked, termination_log_after,
};
pub use crate::log::facts::MemoryEvents;
pub use crate::log::facts::signal::{Rewrites, Signal, parse as signal};
pub use crate::log::format::Format;
pub use crate::probe::Url;
pub use crate::probe::hosts::in_hosts;
pub use crate::probe::http::{HEAD_MAX, Head, head as http_head};
pub use crate::procs::{TITLE_MAX, parse_stat as proc_stat, title_of as proc_title};
pub use crate::spawn::listen_pid;
pub use crate::sys::fd::dirent_numbers;
pub use crate::text::{
    display_command_exact as command_text, duration as duration_text,
    parse_command as hook_command, parse_duration as duration,
};
pub use crate::user::{GroupEntry, PasswdEntry, parse_spec as user_spec, scan_lines};
pub use nix::unistd::Pid;
