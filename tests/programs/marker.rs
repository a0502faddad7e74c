//! Test program: proves it ran, then exits with a chosen code.
//!
//! `marker FILE CODE [ARG...]` appends one line to FILE (its pid and its
//! arguments), then exits with CODE (0-255). Nothing else: no output, no
//! signal handling, so whatever vigil sees comes from vigil. With no
//! arguments it exits 0 without writing anything. Used as COMMAND by
//! tests/it/cli_fuzz.rs, and as a harmless hook.

use std::io::Write;

fn main() {
    let args: Vec<String> = std::env::args_os()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let Some(file) = args.get(1) else {
        std::process::exit(0);
    };
    let code = args.get(2).and_then(|c| c.parse::<i32>().ok()).unwrap_or(0);
    let line = format!("{} {}\n", std::process::id(), args[2..].join(" "));
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(file)
        .and_then(|mut f| f.write_all(line.as_bytes()));
    if let Err(e) = written {
        eprintln!("marker: cannot write {file}: {e}");
        std::process::exit(98);
    }
    std::process::exit(code);
}
