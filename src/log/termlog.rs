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
//!
//! It says what it did and leaves the telling to the caller, the logger.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;

use super::format::LINE_MAX;
use crate::sys::fd as sys;

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
    let same = |fd: Option<_>| {
        fd.and_then(sys::file_of)
            .is_some_and(|(id, _)| id == (target.dev(), target.ino()))
    };
    if same(sys::stderr()) {
        Some(Stream::Stderr)
    } else if same(sys::stdout()) {
        Some(Stream::Stdout)
    } else {
        None
    }
}

/// What became of a message for the termination log.
#[derive(Debug)]
pub enum Outcome {
    Written,
    /// Not written: the path is vigil's stderr, which has the words already.
    OnStderr,
    /// Not written: the path is vigil's own stdout or stderr, where a
    /// provisional message would be one more line of the log.
    OwnStream,
    /// Not written: a usage error does not go over an executable file.
    Program,
    Failed(io::Error),
}

/// Writes `line` (the text report, or a record as vigil logged it), cut
/// to what Kubernetes reads, and ending in a newline, in place of what the
/// file held. `on_stderr` says the same words were logged to stderr
/// already.
pub fn write(path: &Path, line: &[u8], on_stderr: bool) -> Outcome {
    let stream = own_stream(path);
    if stream == Some(Stream::Stderr) && on_stderr {
        return Outcome::OnStderr;
    }
    let text = capped(line);
    let mut options = OpenOptions::new();
    options.write(true).custom_flags(libc::O_NONBLOCK);
    if stream.is_some() {
        options.append(true);
    } else {
        options.create(true);
    }
    let written = options.open(path).and_then(|mut file: File| {
        file.write_all(&text)?;
        // Written over what was there, then cut to its length, rather than
        // emptied first: whoever reads it meanwhile (or after vigil was
        // killed in between) finds a whole message, and a bind-mounted file
        // (Kubernetes' /dev/termination-log), which cannot be replaced by a
        // rename, is fine. A FIFO or a device has no length to set; a
        // regular file whose cut fails is written again from empty, so
        // that no tail of an older message is left after this one.
        if stream.is_none() && file.metadata()?.is_file() {
            let len = text.len() as u64;
            if file.set_len(len).is_err() && file.set_len(len).is_err() {
                let mut again = OpenOptions::new();
                again
                    .write(true)
                    .truncate(true)
                    .custom_flags(libc::O_NONBLOCK);
                again.open(path)?.write_all(&text)?;
            }
        }
        Ok(())
    });
    match written {
        Ok(()) => Outcome::Written,
        Err(e) => Outcome::Failed(e),
    }
}

/// Writes the provisional message, which stands if vigil is killed before
/// it can write its report; never to vigil's own stdout or stderr, where
/// it would be a line of the log like any other.
pub fn write_provisional(path: &Path, line: &[u8]) -> Outcome {
    if own_stream(path).is_some() {
        return Outcome::OwnStream;
    }
    write(path, line, false)
}

/// Writes a usage error (the line vigil wrote on stderr), unless `path`
/// is an executable file: the path then most likely came from a command
/// line that lost the value of its `--termination-log` (`vigil
/// --termination-log /app/server`), which took the program for it, and
/// writing there would destroy the program.
pub fn write_usage_error(path: &Path, line: &[u8]) -> Outcome {
    use std::os::unix::fs::PermissionsExt;
    let executable =
        std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0);
    if executable {
        return Outcome::Program;
    }
    write(path, line, true)
}

/// `line` ending in a newline, in at most `LINE_MAX` bytes (what
/// Kubernetes reads): a longer one is cut at a character boundary and
/// marked with `...`.
fn capped(line: &[u8]) -> Vec<u8> {
    let mut text = line.strip_suffix(b"\n").unwrap_or(line).to_vec();
    if text.len() > LINE_MAX - 1 {
        text.truncate(crate::text::char_start(&text, LINE_MAX - 4));
        text.extend_from_slice(b"...");
    }
    text.push(b'\n');
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
        assert!(matches!(
            write(&path, "é".repeat(5000).as_bytes(), false),
            Outcome::Written
        ));
        let written = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert!(written.len() <= LINE_MAX, "{}", written.len());
        assert!(written.ends_with("...\n"));
    }

    #[test]
    fn a_file_is_replaced_not_appended_to() {
        let path = temp("replace");
        std::fs::write(&path, "an older report\n").unwrap();
        assert!(matches!(
            write(&path, b"the report", false),
            Outcome::Written
        ));
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
        assert!(matches!(
            write_usage_error(&path, b"vigil: error: no command given\n"),
            Outcome::Program
        ));
        let kept = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(kept, "#!/bin/sh\necho hi\n");
    }

    #[test]
    fn a_fifo_without_a_reader_does_not_block() {
        let path = temp("fifo");
        nix::unistd::mkfifo(&path, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        // Fails instead of waiting for a reader forever.
        let outcome = write(&path, b"the report\n", false);
        std::fs::remove_file(&path).unwrap();
        assert!(
            matches!(&outcome, Outcome::Failed(e) if e.raw_os_error() == Some(libc::ENXIO)),
            "{outcome:?}"
        );
    }
}
