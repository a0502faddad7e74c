//! `--install DIR`: vigil copies its own program to `DIR/vigil`, mode
//! 0755, and says what it wrote. The release image, which holds nothing
//! but vigil, is then its own Kubernetes init container: `args:
//! ["--install", "/opt/vigil"]` into an `emptyDir` the application's
//! container runs vigil from.
//!
//! The copy is atomic: a temporary file in DIR, written, made 0755,
//! flushed to the disk (fsync), then renamed over `DIR/vigil`, and the
//! directory flushed too, so that a reader sees the old file or the whole
//! new one, never a part, even across a crash. Run again over a copy, it
//! replaces it the same way (a running copy goes on running: rename
//! replaces the name, not the file).
//!
//! The program copied is `/proc/self/exe`, the very file vigil runs from.
//! Without /proc, it is the path vigil was executed by (`AT_EXECFN`, from
//! the kernel, no /proc needed): the same file unless someone replaced it
//! since vigil started.

mod sha256;

use std::ffi::OsStr;
use std::fmt;
use std::fs::{self, File, OpenOptions};
use std::io::{self, ErrorKind, Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::log;
use crate::log::event::Event;
use crate::log::format::{Fields, Obj};
use crate::text::os_error;

/// The name the copy gets in DIR.
const NAME: &str = "vigil";

/// How many temporary names are tried when one exists already (another
/// install into the same directory at the same moment, or one killed
/// half-way).
const TRIES: u32 = 100;

/// Copies vigil to `dir`; vigil's exit status: 0 when the copy is in
/// place, 1 when it is not (one line saying what failed).
pub fn run(dir: &Path) -> i32 {
    let Err(failed) = install(dir) else {
        return 0;
    };
    let failure = Failure { dir, failed };
    log::emit_final(&Event::InstallFailed {
        failure: &failure,
        status: 1,
    });
    1
}

/// What the line of a failed install says: `cannot install vigil in DIR:
/// STEP [PATH]: ERROR`, and the same as fields.
pub struct Failure<'a> {
    pub dir: &'a Path,
    pub failed: Failed,
}

impl fmt::Display for Failure<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let failed = &self.failed;
        write!(
            f,
            "cannot install vigil in {}: {}",
            self.dir.display(),
            failed.step
        )?;
        if let Some(path) = &failed.path {
            write!(f, " {}", path.display())?;
        }
        write!(f, ": {}", os_error(&failed.error))
    }
}

impl Fields for Failure<'_> {
    fn fields<'a>(&'a self, o: &mut Obj<'_, 'a>) {
        let failed = &self.failed;
        o.field("dir", self.dir)
            .word("step", failed.step)
            .opt("path", failed.path.as_deref())
            .field("error", os_error(&failed.error));
    }
}

/// The step that failed, on which file (none: the directory itself),
/// and why.
pub struct Failed {
    pub step: &'static str,
    pub path: Option<PathBuf>,
    pub error: io::Error,
}

/// `step` failed on `path` (none: the directory itself), for `map_err`.
fn failed<'p>(step: &'static str, path: Option<&'p Path>) -> impl FnOnce(io::Error) -> Failed + 'p {
    move |error| Failed {
        step,
        path: path.map(Path::to_path_buf),
        error,
    }
}

/// The copy, put in place, and the line that says what was written.
fn install(dir: &Path) -> Result<(), Failed> {
    let (mut source, source_path) = open_own_program()?;
    let (temporary, mut file) = create_temporary(dir)?;
    let path = dir.join(NAME);
    let (bytes, sha256) = write_copy(&mut source, &source_path, &mut file, &temporary)
        .and_then(|written| {
            fs::rename(&temporary, &path).map_err(failed("renaming it to", Some(&path)))?;
            Ok(written)
        })
        .inspect_err(|_| {
            // The copy is not in place; the partial file goes, as far as it
            // can (if it cannot, the error is still the one to tell).
            let _ = fs::remove_file(&temporary);
        })?;
    sync_directory(dir)?;
    log::emit_final(&Event::Installed {
        path: &path,
        bytes,
        sha256: &sha256,
        source: &source_path,
    });
    Ok(())
}

/// vigil's own program, open for reading, and the path it was opened by.
fn open_own_program() -> Result<(File, PathBuf), Failed> {
    let own = PathBuf::from("/proc/self/exe");
    let error = match File::open(&own) {
        Ok(file) => return Ok((file, own)),
        Err(e) => e,
    };
    // No /proc (or not this process's): the file vigil was executed by.
    let executed =
        crate::sys::env::exec_path().map(|p| PathBuf::from(OsStr::from_bytes(p.to_bytes())));
    if let Some(path) = executed
        && let Ok(file) = File::open(&path)
    {
        return Ok((file, path));
    }
    // The first error is the one that says why: /proc is missing.
    Err(failed("opening", Some(&own))(error))
}

/// A new file in `dir`, under a name of its own, readable and writable
/// by its owner alone until it is complete.
fn create_temporary(dir: &Path) -> Result<(PathBuf, File), Failed> {
    let pid = std::process::id();
    let mut attempt = 0;
    loop {
        let path = dir.join(format!(".{NAME}.install-{pid}-{attempt}"));
        let created = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_CLOEXEC)
            .open(&path);
        match created {
            Ok(file) => return Ok((path, file)),
            Err(e) if e.kind() == ErrorKind::AlreadyExists && attempt + 1 < TRIES => {
                attempt += 1;
            }
            // The temporary name would say nothing to the user: the
            // directory is what is missing, or read-only, or full.
            Err(error) => return Err(failed("creating a file there", None)(error)),
        }
    }
}

/// Copies `source` into `file`, makes it 0755 and flushes it to the disk;
/// its length and SHA-256.
fn write_copy(
    source: &mut File,
    source_path: &Path,
    file: &mut File,
    path: &Path,
) -> Result<(u64, String), Failed> {
    let mut sha = sha256::Sha256::new();
    let mut bytes = 0u64;
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        let n = match source.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(failed("reading", Some(source_path))(e)),
        };
        let chunk = buffer.get(..n).unwrap_or_default();
        sha.update(chunk);
        file.write_all(chunk)
            .map_err(failed("writing", Some(path)))?;
        bytes += n as u64;
    }
    // Set, not left to the umask: whoever runs the copy may be anyone.
    file.set_permissions(fs::Permissions::from_mode(0o755))
        .map_err(failed("making executable", Some(path)))?;
    file.sync_all().map_err(failed("flushing", Some(path)))?;
    Ok((bytes, sha.hex()))
}

/// Flushes `dir` itself, so that the rename is on the disk too. A file
/// system that cannot flush a directory says EINVAL: nothing more can be
/// done there, and the copy is in place.
fn sync_directory(dir: &Path) -> Result<(), Failed> {
    let synced = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_CLOEXEC)
        .open(dir)
        .and_then(|d| d.sync_all());
    match synced {
        Err(error) if error.raw_os_error() != Some(libc::EINVAL) => {
            Err(failed("flushing the directory", None)(error))
        }
        _ => Ok(()),
    }
}
