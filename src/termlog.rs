//! The termination log: one file where the exit report (or why nothing
//! could start) is left for whoever looks after the container. Kubernetes
//! creates `/dev/termination-log` and shows what is in it as the
//! termination message; a CI job may point it anywhere.
//!
//! Writing it is the last thing vigil does, so it must not be what keeps
//! vigil from exiting or what destroys something else:
//! - it never blocks: the file is opened non-blocking, so a FIFO that
//!   nobody reads is a warning, not a hang;
//! - it never truncates vigil's own stdout or stderr: given a path that is
//!   one of them (`--termination-log /dev/stderr` with `2>>ci.log`), vigil
//!   appends to it, or leaves it alone when the report is already there.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::fd::AsFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;

/// Kubernetes reads at most this much of the termination log.
pub const LIMIT: usize = 4096;

/// Which of vigil's own streams a path is, if any.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stream {
    Stdout,
    Stderr,
}

/// Whether `path` is the same file as vigil's stdout or stderr (the same
/// device and inode: `/dev/stderr`, `/proc/self/fd/1`, or the file a shell
/// redirected them to).
fn own_stream(path: &Path) -> Option<Stream> {
    let target = std::fs::metadata(path).ok()?;
    // dev_t and ino_t are narrower than u64 on some 32-bit C libraries.
    #[allow(clippy::unnecessary_cast)]
    let same = |fd: std::os::fd::BorrowedFd<'_>| {
        nix::sys::stat::fstat(fd)
            .is_ok_and(|st| st.st_dev as u64 == target.dev() && st.st_ino as u64 == target.ino())
    };
    if same(io::stderr().as_fd()) {
        Some(Stream::Stderr)
    } else if same(io::stdout().as_fd()) {
        Some(Stream::Stdout)
    } else {
        None
    }
}

/// Writes `message`, cut to what Kubernetes reads. `on_stderr` says the
/// same words were logged to stderr already. A failure is a warning: it
/// never changes the exit status.
pub fn write(path: &Path, message: &str, on_stderr: bool) {
    let stream = own_stream(path);
    if stream == Some(Stream::Stderr) && on_stderr {
        log::debug!(
            "the termination log {} is vigil's stderr, which has the report already",
            path.display()
        );
        return;
    }
    let text = capped(message);
    let mut options = OpenOptions::new();
    options.write(true).custom_flags(libc::O_NONBLOCK);
    if stream.is_some() {
        options.append(true);
    } else {
        options.create(true).truncate(true);
    }
    let written = options
        .open(path)
        .and_then(|mut file: File| file.write_all(text.as_bytes()));
    match written {
        Ok(()) => {}
        // ENXIO: a FIFO without a reader; EAGAIN: a full one.
        Err(e) if matches!(e.raw_os_error(), Some(libc::ENXIO | libc::EAGAIN)) => log::warn!(
            "could not write the termination log {}: nobody reads it (a FIFO without a reader, or a full one)",
            path.display()
        ),
        Err(e) => log::warn!(
            "could not write the termination log {}: {}",
            path.display(),
            crate::text::os_error(&e)
        ),
    }
}

/// Writes a usage error, unless `path` is an executable file: the path
/// then most likely came from a command line that lost the value of its
/// `--termination-log` (`vigil --termination-log /app/server`), which took
/// the program for it, and writing there would destroy the program.
pub fn write_usage_error(path: &Path, message: &str) {
    use std::os::unix::fs::PermissionsExt;
    let executable =
        std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0);
    if executable {
        return;
    }
    write(path, message, true);
}

/// `message` and a newline, in at most `LIMIT` bytes: a longer one is cut
/// at a character boundary and marked with `...`.
fn capped(message: &str) -> String {
    let mut text = message.to_string();
    if text.len() > LIMIT - 1 {
        let mut cut = LIMIT - 4;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push_str("...");
    }
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> std::path::PathBuf {
        std::env::temp_dir().join(format!("vigil-tlog-{name}-{}", std::process::id()))
    }

    #[test]
    fn the_log_is_capped() {
        let path = temp("cap");
        write(&path, &"é".repeat(5000), false);
        let written = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert!(written.len() <= LIMIT, "{}", written.len());
        assert!(written.ends_with("...\n"));
    }

    #[test]
    fn a_file_is_replaced_not_appended_to() {
        let path = temp("replace");
        std::fs::write(&path, "an older report\n").unwrap();
        write(&path, "the report", false);
        let written = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(written, "the report\n");
    }

    #[test]
    fn a_usage_error_never_overwrites_a_program() {
        use std::os::unix::fs::PermissionsExt;
        let path = temp("program");
        std::fs::write(&path, "#!/bin/sh\necho hi\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        write_usage_error(&path, "vigil: error: no command given");
        let kept = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(kept, "#!/bin/sh\necho hi\n");
    }

    #[test]
    fn a_fifo_without_a_reader_does_not_block() {
        let path = temp("fifo");
        nix::unistd::mkfifo(&path, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        // Returns (with a warning) instead of waiting for a reader forever.
        write(&path, "the report", false);
        std::fs::remove_file(&path).unwrap();
    }
}
