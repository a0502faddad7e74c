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

use std::borrow::Cow;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;

use crate::logging::{self, Level};

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
    let same = |fd| logging::file_of(fd).is_some_and(|(id, _)| id == (target.dev(), target.ino()));
    if same(crate::sys::fd::stderr()) {
        Some(Stream::Stderr)
    } else if same(crate::sys::fd::stdout()) {
        Some(Stream::Stdout)
    } else {
        None
    }
}

/// Writes `line` (the text report, or a record as vigil logged it), cut
/// to what Kubernetes reads, and ending in a newline, in place of what the
/// file held. `on_stderr` says the same words were logged to stderr
/// already. A failure is a warning: it never changes the exit status.
pub fn write(path: &Path, line: &[u8], on_stderr: bool) {
    let stream = own_stream(path);
    if stream == Some(Stream::Stderr) && on_stderr {
        logging::emit(
            Level::Debug,
            "termination_log_skipped",
            format_args!(
                "the termination log {} is vigil's stderr, which has the report already",
                path.display()
            ),
            |r| r.field("path", path),
        );
        return;
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
    let Err(e) = written else {
        return;
    };
    let error = crate::text::os_error(&e);
    // ENXIO: a FIFO without a reader; EAGAIN: a full one.
    let unread = matches!(e.raw_os_error(), Some(libc::ENXIO | libc::EAGAIN));
    logging::emit(
        Level::Warning,
        "termination_log_failed",
        format_args!(
            "could not write the termination log {}: {}",
            path.display(),
            if unread {
                "nobody reads it (a FIFO without a reader, or a full one)"
            } else {
                &error
            }
        ),
        |r| {
            r.field("path", path)
                .field("error", error.as_str())
                .field("unread", unread)
        },
    );
}

/// Writes the provisional message, which stands if vigil is killed before
/// it can write its report; never to vigil's own stdout or stderr, where
/// it would be a line of the log like any other.
pub fn write_provisional(path: &Path, line: &[u8]) {
    if own_stream(path).is_none() {
        write(path, line, false);
    }
}

/// Writes a usage error (the line vigil wrote on stderr), unless `path`
/// is an executable file: the path then most likely came from a command
/// line that lost the value of its `--termination-log` (`vigil
/// --termination-log /app/server`), which took the program for it, and
/// writing there would destroy the program.
pub fn write_usage_error(path: &Path, line: &[u8]) {
    use std::os::unix::fs::PermissionsExt;
    let executable =
        std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0);
    if executable {
        return;
    }
    write(path, line, true);
}

/// `line` ending in a newline, in at most `LIMIT` bytes: a longer one is
/// cut at a character boundary and marked with `...`.
fn capped(line: &[u8]) -> Cow<'_, [u8]> {
    let body = line.strip_suffix(b"\n").unwrap_or(line);
    if body.len() < LIMIT && body.len() < line.len() {
        return Cow::Borrowed(line);
    }
    let mut text = body.to_vec();
    if text.len() > LIMIT - 1 {
        text.truncate(crate::text::char_start(&text, LIMIT - 4));
        text.extend_from_slice(b"...");
    }
    text.push(b'\n');
    Cow::Owned(text)
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
        write(&path, "é".repeat(5000).as_bytes(), false);
        let written = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert!(written.len() <= LIMIT, "{}", written.len());
        assert!(written.ends_with("...\n"));
    }

    #[test]
    fn a_file_is_replaced_not_appended_to() {
        let path = temp("replace");
        std::fs::write(&path, "an older report\n").unwrap();
        write(&path, b"the report", false);
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
        write_usage_error(&path, b"vigil: error: no command given\n");
        let kept = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(kept, "#!/bin/sh\necho hi\n");
    }

    #[test]
    fn a_fifo_without_a_reader_does_not_block() {
        let path = temp("fifo");
        nix::unistd::mkfifo(&path, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        // Returns (with a warning) instead of waiting for a reader forever.
        write(&path, b"the report\n", false);
        std::fs::remove_file(&path).unwrap();
    }
}
