//! Test program: a memory hog, to get a process OOM-killed in a memory cgroup.
//!
//! Allocates memory in chunks and writes to every page (so the memory is
//! really charged, not just reserved), until `--max-mb` is reached; then it
//! keeps the memory and sleeps. In a cgroup whose limit is below `--max-mb`
//! the kernel's OOM killer ends it with SIGKILL.
//!
//! Options:
//!   --max-mb N     stop allocating after N MiB (default 512)
//!   --chunk-mb C   allocate C MiB at a time (default 4)
//!   --ready FILE   create FILE before allocating anything
//!   --hold-secs S  after reaching --max-mb, sleep S seconds, then exit 0
//!                  (default 300)

#[path = "support/common.rs"]
mod common;

use common::{Args, die, unknown};
use std::time::Duration;

const PROG: &str = "memhog";
const MIB: usize = 1 << 20;
const PAGE: usize = 4096;

fn main() {
    let mut max_mb = 512usize;
    let mut chunk_mb = 4usize;
    let mut ready = None;
    let mut hold_secs = 300u64;
    let mut args = Args::from_env();
    while let Some(a) = args.next() {
        match a.as_str() {
            "--max-mb" => max_mb = args.number(&a),
            "--chunk-mb" => chunk_mb = args.number::<usize>(&a).max(1),
            "--ready" => ready = Some(args.value(&a)),
            "--hold-secs" => hold_secs = args.number::<usize>(&a) as u64,
            _ => unknown(&a),
        }
    }
    if let Some(f) = &ready {
        std::fs::write(f, format!("{}\n", std::process::id()))
            .unwrap_or_else(|e| die(&format!("cannot write {f}: {e}")));
    }
    let mut kept: Vec<Vec<u8>> = Vec::new();
    let mut total = 0usize;
    while total < max_mb {
        let mut chunk = vec![0u8; chunk_mb * MIB];
        // vec![0; n] may map zero pages lazily: write one byte per page.
        for i in (0..chunk.len()).step_by(PAGE) {
            chunk[i] = 1;
        }
        kept.push(std::hint::black_box(chunk));
        total += chunk_mb;
    }
    eprintln!("memhog: holding {total} MiB");
    // Holding the memory this long (`--hold-secs`) is the program's job.
    std::thread::sleep(Duration::from_secs(hold_secs));
}
