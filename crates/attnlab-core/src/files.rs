//! The input gate: every file a user names (blocks, configs, answers, saved state) is opened
//! and read here, and nowhere else.
//!
//! * Only regular files (and, where a caller accepts one, directories) are read. FIFOs,
//!   devices and sockets are refused at once: the file is opened without blocking
//!   (`O_NONBLOCK`, so opening a FIFO with no writer returns immediately) and its type is
//!   checked on the opened handle, so a path swapped between the check and the open is caught.
//!   Symbolic links are followed to what they name, and that is what is checked.
//! * At most [`Limits::max_file_bytes`] bytes are read: a file whose size is over the cap is
//!   refused before reading, and a file that grows (or reports no size, like `/proc` files)
//!   is cut off one byte past the cap and refused.
//! * Errors are one line naming the file, the cause and the limit.
//!
//! **Pipes.** [`read_input`] (what `--config`, `--blocks`, `--answers` and `--text-file` use)
//! also reads a pipe that has a writer — a FIFO, or the `/dev/fd/N` of a shell's process
//! substitution `<(jq … config.json)` — and standard input for the path `-`: up to the same
//! byte cap, each wait for more bytes at most [`PIPE_IDLE_TIMEOUT`]. A pipe nobody writes to is
//! refused within [`PIPE_WRITER_WAIT`] (a FIFO with no writer, an empty standard input), and
//! standard input that is a terminal is refused at once (nothing would end it). The pipe is
//! opened without blocking and polled (a short sleep between empty reads), so no read ever
//! waits on a writer that never comes. Everything else ([`read`]: saved state, model files,
//! the members of a directory) stays regular files only.
//!
//! ```
//! use attnlab_core::files;
//! use attnlab_core::limits::Limits;
//! let e = files::read(std::path::Path::new("/dev/zero"), &Limits::default()).unwrap_err();
//! assert!(e.to_string().ends_with("it is a character device, not a regular file"));
//! ```

use std::fs::{File, Metadata};
use std::io::Read;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::limits::Limits;
use crate::number;
use crate::{Error, Result};

/// What a path names, once checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entry {
    /// A regular file, of this many bytes.
    File(u64),
    /// A directory.
    Dir,
}

/// The kind of a non-regular file, in words.
fn kind_of(meta: &Metadata) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let t = meta.file_type();
        if t.is_fifo() {
            return "a FIFO (a named pipe)";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if meta.is_dir() {
        "a directory"
    } else {
        "neither a regular file nor a directory"
    }
}

fn not_regular(path: &Path, meta: &Metadata) -> Error {
    Error::io(path, format!("it is {}, not a regular file", kind_of(meta)))
}

/// What `path` names (following symbolic links), without opening it.
///
/// # Errors
/// A missing path ([`crate::ErrorKind::NotFound`]), or one that names a FIFO, a device or a
/// socket.
pub fn entry(path: &Path) -> Result<Entry> {
    let meta = std::fs::metadata(path).map_err(|e| Error::io_source(path, e))?;
    if meta.is_dir() {
        Ok(Entry::Dir)
    } else if meta.is_file() {
        Ok(Entry::File(meta.len()))
    } else {
        Err(not_regular(path, &meta))
    }
}

/// Opens a regular file for reading without ever blocking, and returns it with its size.
///
/// # Errors
/// See [`entry`]; a directory is refused too.
pub fn open(path: &Path) -> Result<(File, u64)> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // Opening a FIFO for reading blocks until a writer appears; O_NONBLOCK returns at once
        // (the type check below then refuses it). On regular files O_NONBLOCK has no effect.
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path).map_err(|e| Error::io_source(path, e))?;
    let meta = file.metadata().map_err(|e| Error::io_source(path, e))?;
    if !meta.is_file() {
        return Err(not_regular(path, &meta));
    }
    Ok((file, meta.len()))
}

/// The error for a file over the byte cap.
pub fn too_large(path: &Path, size: Option<u64>, limits: &Limits) -> Error {
    let size = match size {
        Some(s) => format!("{} is", number::bytes(s)),
        None => "it is".into(),
    };
    Error::io(
        path,
        format!(
            "{size} over the limit of {} for an input file (raise it with --max-file-size)",
            number::bytes(limits.max_file_bytes)
        ),
    )
}

/// Reads at most `limits.max_file_bytes` bytes of a regular file.
///
/// # Errors
/// See [`open`]; a file over the cap; a read error.
pub fn read(path: &Path, limits: &Limits) -> Result<Vec<u8>> {
    let (file, size) = open(path)?;
    if size > limits.max_file_bytes {
        return Err(too_large(path, Some(size), limits));
    }
    capped(path, file, size, limits)
}

/// Reads a UTF-8 text file of at most `limits.max_file_bytes` bytes.
///
/// # Errors
/// See [`read`]; bytes that are not UTF-8 (the offset of the first bad byte is named).
pub fn read_text(path: &Path, limits: &Limits) -> Result<String> {
    utf8(read(path, limits)?, path)
}

/// How long a pipe may go without delivering a byte while its writer is still there.
pub const PIPE_IDLE_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a pipe with no writer (and nothing in it) is waited on before it is refused.
pub const PIPE_WRITER_WAIT: Duration = Duration::from_millis(500);

/// The path that means standard input.
pub const STDIN: &str = "-";

/// Whether `path` is `-` (standard input).
pub fn is_stdin(path: &Path) -> bool {
    path.as_os_str() == STDIN
}

/// How `path` is named in messages: `standard input` for `-`, the path otherwise.
pub fn shown(path: &Path) -> &Path {
    if is_stdin(path) {
        Path::new("standard input")
    } else {
        path
    }
}

/// Whether `path` is read as a stream by [`read_input`]: `-`, or a FIFO / pipe (symbolic
/// links followed, so `/dev/fd/63` of a process substitution is one).
pub fn is_stream(path: &Path) -> bool {
    if is_stdin(path) {
        return true;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        std::fs::metadata(path).is_ok_and(|m| m.file_type().is_fifo())
    }
    #[cfg(not(unix))]
    {
        false
    }
}

/// Reads at most `limits.max_file_bytes` bytes of a regular file, a pipe that has a writer, or
/// standard input (`-`); see the module docs for the timeouts.
///
/// # Errors
/// See [`read`]; a pipe with no writer, a writer silent for [`PIPE_IDLE_TIMEOUT`], standard
/// input that is a terminal, more bytes than the cap.
pub fn read_input(path: &Path, limits: &Limits) -> Result<Vec<u8>> {
    if is_stdin(path) {
        return read_stdin(limits);
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let file = open_nonblocking(path)?;
        let meta = file.metadata().map_err(|e| Error::io_source(path, e))?;
        if meta.file_type().is_fifo() {
            return read_pipe(path, file, limits, "it is a FIFO (a named pipe)");
        }
    }
    read(path, limits)
}

/// [`read_input`] for UTF-8 text.
///
/// # Errors
/// See [`read_input`] and [`read_text`].
pub fn read_input_text(path: &Path, limits: &Limits) -> Result<String> {
    utf8(read_input(path, limits)?, shown(path))
}

fn open_nonblocking(path: &Path) -> Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    options.open(path).map_err(|e| Error::io_source(path, e))
}

fn read_stdin(limits: &Limits) -> Result<Vec<u8>> {
    use std::io::IsTerminal;
    let name = shown(Path::new(STDIN));
    if std::io::stdin().is_terminal() {
        return Err(Error::io(
            name,
            "it is a terminal; pipe or redirect the file into it (… < config.json) or name the file",
        ));
    }
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::FileTypeExt;
        // Reopened through /proc: a new open file description of the same pipe or file, so
        // making it non-blocking does not change the descriptor the shell shares with us.
        if let Ok(file) = open_nonblocking(Path::new("/proc/self/fd/0")) {
            let meta = file.metadata().map_err(|e| Error::io_source(name, e))?;
            let t = meta.file_type();
            if t.is_fifo() {
                return read_pipe(name, file, limits, "standard input is a pipe");
            }
            if !meta.is_file() {
                return Err(not_regular(name, &meta));
            }
            if meta.len() > limits.max_file_bytes {
                return Err(too_large(name, Some(meta.len()), limits));
            }
            return capped(name, file, meta.len(), limits);
        }
    }
    capped(name, std::io::stdin().lock(), 0, limits)
}

/// Reads `reader` to its end, at most `limits.max_file_bytes` bytes.
fn capped(path: &Path, reader: impl Read, size: u64, limits: &Limits) -> Result<Vec<u8>> {
    let cap = limits.max_file_bytes;
    let mut bytes = Vec::with_capacity(usize::try_from(size.min(cap)).unwrap_or(0));
    reader
        .take(cap.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io_source(path, e))?;
    if crate::limits::u(bytes.len()) > cap {
        return Err(too_large(path, None, limits));
    }
    Ok(bytes)
}

/// Reads a pipe opened non-blocking: an empty read with no writer seen yet waits (briefly
/// sleeping) up to [`PIPE_WRITER_WAIT`]; once a writer is seen (a read that would block, or
/// bytes), an empty read is the end, and a wait over [`PIPE_IDLE_TIMEOUT`] is refused.
fn read_pipe(path: &Path, mut file: File, limits: &Limits, what: &str) -> Result<Vec<u8>> {
    let cap = crate::limits::u(usize::try_from(limits.max_file_bytes).unwrap_or(usize::MAX));
    let mut bytes = Vec::new();
    let mut chunk = vec![0u8; 1 << 16];
    let started = Instant::now();
    let mut last = started;
    let mut writer_seen = false;
    let mut nap = Duration::from_millis(1);
    loop {
        match file.read(&mut chunk) {
            Ok(0) if writer_seen => return Ok(bytes),
            Ok(0) => {
                if started.elapsed() >= PIPE_WRITER_WAIT {
                    return Err(Error::io(
                        path,
                        format!(
                            "{what} and nothing was written to it within {} s (no program is writing to it); expected a pipe with a writer or a file",
                            number::short(PIPE_WRITER_WAIT.as_secs_f64())
                        ),
                    ));
                }
            }
            Ok(n) => {
                writer_seen = true;
                last = Instant::now();
                nap = Duration::from_millis(1);
                if crate::limits::u(bytes.len() + n) > cap {
                    return Err(too_large(path, None, limits));
                }
                bytes.extend_from_slice(&chunk[..n]);
                continue;
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                writer_seen = true;
                if last.elapsed() >= PIPE_IDLE_TIMEOUT {
                    return Err(Error::io(
                        path,
                        format!(
                            "{what} whose writer sent nothing for {} s after {}; expected the whole input within that wait",
                            number::short(PIPE_IDLE_TIMEOUT.as_secs_f64()),
                            number::bytes(crate::limits::u(bytes.len()))
                        ),
                    ));
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Error::io_source(path, e)),
        }
        std::thread::sleep(nap);
        nap = (nap * 2).min(Duration::from_millis(20));
    }
}

fn utf8(bytes: Vec<u8>, path: &Path) -> Result<String> {
    String::from_utf8(bytes).map_err(|e| {
        Error::io(
            path,
            format!(
                "not UTF-8 text (invalid byte at offset {})",
                e.utf8_error().valid_up_to()
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifos_devices_and_oversized_files_are_refused_without_reading() {
        let dir = tempfile::tempdir().unwrap();
        let small = Limits {
            max_file_bytes: 10,
            ..Limits::default()
        };
        let p = dir.path().join("a.json");
        std::fs::write(&p, "0123456789").unwrap();
        assert_eq!(read(&p, &small).unwrap().len(), 10);
        std::fs::write(&p, "0123456789X").unwrap();
        let e = read(&p, &small).unwrap_err().to_string();
        assert!(
            e.contains("11 bytes is over the limit of 10 bytes") && e.contains("--max-file-size"),
            "{e}"
        );
        for dev in ["/dev/zero", "/dev/null"] {
            let e = read(Path::new(dev), &small).unwrap_err().to_string();
            assert!(e.contains("a character device"), "{e}");
        }
        #[cfg(unix)]
        {
            let fifo = dir.path().join("fifo.json");
            let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
            // SAFETY: a valid NUL-terminated path.
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
            let start = std::time::Instant::now();
            let e = read(&fifo, &small).unwrap_err().to_string();
            assert!(e.contains("FIFO"), "{e}");
            assert!(start.elapsed() < std::time::Duration::from_secs(1));
            assert!(entry(&fifo).is_err());
            // A symlink to a device is the device.
            let link = dir.path().join("link.json");
            std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
            assert!(read(&link, &small)
                .unwrap_err()
                .to_string()
                .contains("character device"));
        }
        assert_eq!(entry(dir.path()).unwrap(), Entry::Dir);
        let e = read(&dir.path().join("missing"), &small).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::NotFound);
        std::fs::write(&p, [0x66, 0xff]).unwrap();
        assert!(read_text(&p, &small)
            .unwrap_err()
            .to_string()
            .contains("offset 1"));
    }
}
