//! File-backed shared memory: a small `#[repr(C)]` state of atomics mapped from a file, so
//! that processes that open the same file share it. Only atomics are ever written in the
//! mapping after it is set up, so a process that dies mid-operation leaves nothing locked;
//! set-up itself holds an `flock`, which the kernel releases when a process dies.
#![allow(unsafe_code)]

#[cfg(unix)]
use std::fs::{File, OpenOptions};
use std::marker::PhantomData;
#[cfg(unix)]
use std::os::fd::AsRawFd;
#[cfg(unix)]
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;
#[cfg(unix)]
use std::ptr::NonNull;
use std::sync::atomic::AtomicU32;
#[cfg(unix)]
use std::sync::atomic::Ordering;

/// A state that can live in a shared mapping: plain data and atomics, valid when zeroed.
///
/// # Safety
/// The type must be `#[repr(C)]`, contain only integers and atomics (no pointers), and every
/// bit pattern — in particular all zeros — must be a valid value.
pub(crate) unsafe trait SharedState: Sync + Sized {
    /// The header every state starts with.
    #[cfg_attr(
        not(unix),
        allow(dead_code, reason = "read only when a file is mapped")
    )]
    fn header(&self) -> &Header;
}

/// The first bytes of every shared state.
#[repr(C)]
pub(crate) struct Header {
    /// `MAGIC` once set up.
    pub magic: std::sync::atomic::AtomicU64,
    /// The layout version and kind, e.g. `KIND_REGULATOR << 16 | 1`.
    pub kind: AtomicU32,
    _pad: u32,
}

impl Header {
    /// A header not yet set up (magic 0) for a state of `kind`.
    pub(crate) const fn new(kind: u32) -> Self {
        Header {
            magic: std::sync::atomic::AtomicU64::new(0),
            kind: AtomicU32::new(kind),
            _pad: 0,
        }
    }
}

/// "RECUOSHM" in ASCII: the state is set up.
#[cfg_attr(
    not(unix),
    allow(dead_code, reason = "read only when a file is mapped")
)]
pub(crate) const MAGIC: u64 = u64::from_le_bytes(*b"RECUOSHM");

#[cfg(unix)]
/// "RECUOINI" in ASCII: a set-up began and has not finished. Only the holder of the file lock
/// writes it, so an opener that finds it under the lock knows the set-up was interrupted
/// (its process died) and does it again.
const SETTING_UP: u64 = u64::from_le_bytes(*b"RECUOINI");

/// The points of a set-up where a test may interrupt it, as a process killed there would.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) enum SetUpStep {
    /// The file's space is reserved (all zeros).
    SpaceReserved,
    /// The set-up's mark is written.
    Marked,
    /// The settings are written.
    SettingsWritten,
    /// The kind is written; only the final mark is missing.
    KindWritten,
}

#[cfg(test)]
thread_local! {
    /// The step after which this thread's next set-up stops (a test's fault injection).
    pub(crate) static INTERRUPT_AFTER: std::cell::Cell<Option<SetUpStep>> =
        const { std::cell::Cell::new(None) };
}

/// Whether a test asked this set-up to stop after `step`: it then ends there, its lock
/// released, as if its process had been killed.
#[cfg(test)]
fn interrupted(step: SetUpStep) -> Result<(), SharedError> {
    if INTERRUPT_AFTER.with(|s| s.get()) == Some(step) {
        INTERRUPT_AFTER.with(|s| s.set(None));
        return Err(SharedError::Io(std::io::Error::other(format!(
            "set-up interrupted after {step:?} (a test's fault injection)"
        ))));
    }
    Ok(())
}

#[cfg(all(unix, not(test)))]
#[inline(always)]
fn interrupted(_step: SetUpStep) -> Result<(), SharedError> {
    Ok(())
}

/// Why a shared region could not be used.
#[derive(Debug)]
pub enum SharedError {
    /// The file could not be opened, sized, locked or mapped.
    Io(std::io::Error),
    /// The file holds another kind of state, or another layout version.
    WrongKind {
        /// What the file says it holds.
        found: u32,
        /// What was asked for.
        expected: u32,
    },
    /// The file was set up with other settings (say, another rate): sharing it would make
    /// the processes disagree about the allowance.
    Mismatch(String),
}

impl std::fmt::Display for SharedError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SharedError::Io(e) => write!(f, "shared state: {e}"),
            SharedError::WrongKind { found, expected } => write!(
                f,
                "shared state: the file holds state of kind {found:#x}, not {expected:#x} \
                 (another recuo object or version uses it)"
            ),
            SharedError::Mismatch(what) => write!(f, "shared state: {what}"),
        }
    }
}

impl std::error::Error for SharedError {}

impl SharedError {
    /// The stable code every binding reports: 58 for a file set up otherwise or holding
    /// something else (C: 158), 200 for an I/O failure (C: 300).
    pub const fn code(&self) -> u32 {
        match self {
            SharedError::Io(_) => 200,
            SharedError::WrongKind { .. } | SharedError::Mismatch(_) => 58,
        }
    }

    /// Whether the store did not answer yet because its host must make the call (a store
    /// reached by the host, as a WebAssembly host reaches Redis): an I/O error of kind
    /// `WouldBlock`. The caller runs the host's call, gives the store its reply, and asks
    /// again.
    pub fn would_block(&self) -> bool {
        matches!(self, SharedError::Io(e) if e.kind() == std::io::ErrorKind::WouldBlock)
    }

    /// The stable name: `io` or `shared_mismatch`.
    pub const fn name(&self) -> &'static str {
        match self {
            SharedError::Io(_) => "io",
            SharedError::WrongKind { .. } | SharedError::Mismatch(_) => "shared_mismatch",
        }
    }
}

impl From<std::io::Error> for SharedError {
    fn from(e: std::io::Error) -> Self {
        SharedError::Io(e)
    }
}

#[cfg(unix)]
/// A state of type `T` mapped from a file.
pub(crate) struct Mapping<T: SharedState> {
    ptr: NonNull<T>,
    _file: File,
    _marker: PhantomData<T>,
}

#[cfg(unix)]
// SAFETY: the mapping is shared memory holding only atomics and plain integers (SharedState).
unsafe impl<T: SharedState> Send for Mapping<T> {}
#[cfg(unix)]
// SAFETY: as above; all mutation goes through atomics.
unsafe impl<T: SharedState> Sync for Mapping<T> {}

#[cfg(unix)]
impl<T: SharedState> std::ops::Deref for Mapping<T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: ptr points to a live mapping of size_of::<T>() bytes, valid for any bits.
        unsafe { self.ptr.as_ref() }
    }
}

#[cfg(unix)]
impl<T: SharedState> Drop for Mapping<T> {
    fn drop(&mut self) {
        // SAFETY: unmapping exactly what open() mapped; nothing refers to it after drop.
        unsafe {
            libc::munmap(self.ptr.as_ptr().cast(), std::mem::size_of::<T>());
        }
    }
}

#[cfg(unix)]
/// An exclusive `flock` held until dropped (and released by the kernel if the process dies).
pub(crate) struct FileLock<'f>(&'f File);

#[cfg(unix)]
impl<'f> FileLock<'f> {
    fn lock(file: &'f File) -> std::io::Result<Self> {
        loop {
            // SAFETY: flock on a valid open descriptor.
            if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } == 0 {
                return Ok(FileLock(file));
            }
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }
}

#[cfg(unix)]
impl Drop for FileLock<'_> {
    fn drop(&mut self) {
        // SAFETY: unlocking the descriptor locked in lock().
        unsafe {
            libc::flock(self.0.as_raw_fd(), libc::LOCK_UN);
        }
    }
}

#[cfg(unix)]
/// An error refusing the file at `path` for `why`.
fn refused(path: &Path, why: &str) -> SharedError {
    SharedError::Io(std::io::Error::new(
        std::io::ErrorKind::PermissionDenied,
        format!("refusing {}: {why}", path.display()),
    ))
}

#[cfg(unix)]
/// Opens `path` for a shared state: never through a symbolic link, created `0600`, and only
/// if it is a regular file of the effective user that nobody else may write.
pub(crate) fn open_private(path: &Path) -> Result<File, SharedError> {
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => refused(
                path,
                "it is a symbolic link (a shared file is never opened through one)",
            ),
            _ => SharedError::Io(e),
        })?;
    let meta = file.metadata()?;
    if !meta.file_type().is_file() {
        return Err(refused(path, "it is not a regular file"));
    }
    // SAFETY: geteuid has no preconditions and cannot fail.
    let euid = unsafe { libc::geteuid() };
    if meta.uid() != euid {
        return Err(refused(
            path,
            &format!(
                "it belongs to user {}, not to this process's user {euid}",
                meta.uid()
            ),
        ));
    }
    if meta.mode() & 0o022 != 0 {
        return Err(refused(
            path,
            &format!(
                "its group or others may write it (mode {:o}; make it 0600)",
                meta.mode() & 0o777
            ),
        ));
    }
    Ok(file)
}

#[cfg(unix)]
/// Gives `file` its `size` bytes of disk now, so that a full file system fails here rather
/// than with SIGBUS on a later write to the mapping.
fn reserve_space(file: &File, size: usize) -> Result<(), SharedError> {
    let len = libc::off_t::try_from(size)
        .map_err(|_| SharedError::Io(std::io::Error::other("state too large")))?;
    loop {
        // SAFETY: posix_fallocate on a valid open descriptor; it returns an errno.
        match unsafe { libc::posix_fallocate(file.as_raw_fd(), 0, len) } {
            0 => return Ok(()),
            libc::EINTR => continue,
            errno => {
                // Leave the file empty, as if never set up, for the next opener.
                let _ = file.set_len(0);
                return Err(std::io::Error::from_raw_os_error(errno).into());
            }
        }
    }
}

#[cfg(unix)]
impl<T: SharedState> Mapping<T> {
    /// The file's exclusive lock, against every other opener of the file (each has its own
    /// open file description); threads sharing this mapping need a lock of their own too.
    /// The kernel releases it if the process dies while holding it.
    pub(crate) fn lock(&self) -> Result<FileLock<'_>, SharedError> {
        Ok(FileLock::lock(&self._file)?)
    }

    /// Another descriptor of the mapped file, sharing its open file description (and so its
    /// `fcntl` locks of that description), which outlives the mapping.
    pub(crate) fn file(&self) -> Result<File, SharedError> {
        Ok(self._file.try_clone()?)
    }

    /// Maps `path` (created `0600` if missing, its space reserved) as a `T`. The opener that
    /// finds it new (empty, still all zeros, or with a set-up that a process began and did
    /// not finish, whatever instruction it was killed at) runs `init`; every opener then runs
    /// `check` on the state, under the file lock. A file of the wrong size, or whose contents
    /// are not a state (no recuo mark but not all zeros), is refused — never set up again.
    pub(crate) fn open(
        path: &Path,
        kind: u32,
        init: impl FnOnce(&T),
        check: impl FnOnce(&T) -> Result<(), SharedError>,
    ) -> Result<Self, SharedError> {
        let size = std::mem::size_of::<T>();
        let file = open_private(path)?;
        let _lock = FileLock::lock(&file)?;
        let len = file.metadata()?.len();
        if len != 0 && len != size as u64 {
            return Err(SharedError::Mismatch(format!(
                "{} is {len} bytes, not the {size} of this kind of state",
                path.display()
            )));
        }
        if len == 0 {
            reserve_space(&file, size)?;
            interrupted(SetUpStep::SpaceReserved)?;
        }
        // SAFETY: mapping `size` bytes of a file that is that long, shared.
        let raw = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                size,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                0,
            )
        };
        if raw == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error().into());
        }
        let ptr = NonNull::new(raw.cast::<T>()).ok_or_else(|| {
            SharedError::Io(std::io::Error::other("mmap returned a null pointer"))
        })?;
        let mapping = Mapping {
            ptr,
            _file: file.try_clone()?,
            _marker: PhantomData,
        };
        let header = mapping.header();
        let magic = header.magic.load(Ordering::Acquire);
        if magic != MAGIC {
            // SAFETY: `size` readable bytes of the live mapping; read as plain bytes.
            let bytes = unsafe { std::slice::from_raw_parts(raw.cast::<u8>(), size) };
            if magic == SETTING_UP {
                // A set-up whose process died before it finished (we hold the lock it held,
                // and nobody could open the file meanwhile): start it again from zeros.
                // SAFETY: `size` writable bytes of the live mapping, which only openers
                // under this lock use while it is unfinished; all zeros is a valid `T`.
                unsafe { std::ptr::write_bytes(raw.cast::<u8>(), 0, size) };
            } else if bytes.iter().any(|&b| b != 0) {
                return Err(SharedError::Mismatch(format!(
                    "{} does not hold a recuo shared state (it lacks recuo's mark); it is \
                     refused, never set up again over what it holds — remove it if it is yours",
                    path.display()
                )));
            }
            header.magic.store(SETTING_UP, Ordering::Release);
            interrupted(SetUpStep::Marked)?;
            init(&mapping);
            interrupted(SetUpStep::SettingsWritten)?;
            header.kind.store(kind, Ordering::Release);
            interrupted(SetUpStep::KindWritten)?;
            header.magic.store(MAGIC, Ordering::Release);
        }
        let found = header.kind.load(Ordering::Acquire);
        if found != kind {
            return Err(SharedError::WrongKind {
                found,
                expected: kind,
            });
        }
        check(&mapping)?;
        Ok(mapping)
    }
}

/// Where the system is not Unix (WebAssembly): no file can be mapped, so no mapping is ever
/// made, and opening one is a clear [`SharedError::Io`] (`Unsupported`).
#[cfg(not(unix))]
pub(crate) struct Mapping<T: SharedState> {
    never: std::convert::Infallible,
    _marker: PhantomData<T>,
}

#[cfg(not(unix))]
impl<T: SharedState> std::ops::Deref for Mapping<T> {
    type Target = T;
    fn deref(&self) -> &T {
        match self.never {}
    }
}

/// Never held where no file can be mapped.
#[cfg(not(unix))]
pub(crate) struct FileLock<'f>(std::convert::Infallible, PhantomData<&'f ()>);

/// The refusal of a shared file where the system offers none.
#[cfg(not(unix))]
pub(crate) fn unsupported(path: &Path) -> SharedError {
    SharedError::Io(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        format!(
            "{}: shared files need a Unix system (use a remote store to share limits here)",
            path.display()
        ),
    ))
}

#[cfg(not(unix))]
impl<T: SharedState> Mapping<T> {
    pub(crate) fn lock(&self) -> Result<FileLock<'_>, SharedError> {
        match self.never {}
    }

    pub(crate) fn open(
        path: &Path,
        _kind: u32,
        _init: impl FnOnce(&T),
        _check: impl FnOnce(&T) -> Result<(), SharedError>,
    ) -> Result<Self, SharedError> {
        Err(unsupported(path))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Rate, Regulator, RetryBudget};

    fn path(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("recuo-shm-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir.join("state")
    }

    const STEPS: [SetUpStep; 4] = [
        SetUpStep::SpaceReserved,
        SetUpStep::Marked,
        SetUpStep::SettingsWritten,
        SetUpStep::KindWritten,
    ];

    #[test]
    fn a_set_up_interrupted_at_any_step_is_done_again_by_the_next_opener() {
        const S: u64 = 1_000_000_000;
        let rate: Rate = "1/s".parse().unwrap();
        for step in STEPS {
            let file = path(&format!("regulator-{step:?}"));
            INTERRUPT_AFTER.with(|s| s.set(Some(step)));
            let e = Regulator::shared(&file, rate, 2).unwrap_err().to_string();
            assert!(e.contains(&format!("interrupted after {step:?}")), "{e}");
            // The next opener finds the file unfinished and sets it up, with its settings.
            let r = Regulator::shared(&file, rate, 2).unwrap();
            assert!(r.try_acquire_at(10 * S, 1).is_ok());
            assert!(r.try_acquire_at(10 * S, 1).is_ok());
            assert!(r.try_acquire_at(10 * S, 1).is_err());
            // Set up now: a third opener with other settings is refused, not set up again.
            assert!(Regulator::shared(&file, rate, 3).is_err());

            let file = path(&format!("budget-{step:?}"));
            INTERRUPT_AFTER.with(|s| s.set(Some(step)));
            assert!(RetryBudget::shared(&file, 0.1, 0.2, 10).is_err());
            let b = RetryBudget::shared(&file, 0.1, 0.2, 10).unwrap();
            assert!(b.try_withdraw_at(10 * S));
            assert!(b.try_withdraw_at(10 * S));
            assert!(!b.try_withdraw_at(10 * S));
            assert!(RetryBudget::shared(&file, 0.5, 0.2, 10).is_err());
        }
    }

    #[test]
    fn junk_and_other_kinds_are_still_refused() {
        let file = path("junk");
        std::fs::write(
            &file,
            vec![7u8; std::mem::size_of::<crate::regulator::RegulatorState>()],
        )
        .unwrap();
        let e = Regulator::shared(&file, "1/s".parse().unwrap(), 1)
            .unwrap_err()
            .to_string();
        assert!(e.contains("lacks recuo's mark"), "{e}");
    }
}
