//! A concurrency limit shared by the processes of one machine through a file: each place is
//! one byte of the file, held with an open-file-description lock (`fcntl(F_OFD_SETLK)`,
//! Linux 3.15 or later). The kernel releases such a lock when the last descriptor of its
//! open file description closes — when its process exits or is killed, `kill -9` included —
//! so a dead holder's place comes back at once, with no lease and no clean-up.
//!
//! The file starts with the house header (kind, version) and the limit as its setting, set
//! up as every shared state is (`shm::Mapping::open`: owner, mode, no symbolic links, a
//! set-up that survives a crash); the places are bytes past it, never written (a lock may
//! cover bytes past the end of a file). The locks of one open file description never
//! conflict with each other, so this process keeps the set of places it holds under a mutex
//! and never hands a held place to a second thread. A process forked from the one that
//! opened the file shares its description: it opens its own on first use and never touches
//! the places its parent holds.
#![allow(unsafe_code)]

use std::collections::BTreeSet;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use crate::clock::CancelToken;
use crate::limit::{RemoteLease, RemoteLimit, RemotePlace, LONGEST_POLL};
use crate::shm::{open_private, Header, Mapping, SharedError, SharedState};

/// The state at the start of the file: the header and the number of places.
#[repr(C)]
pub(crate) struct LimitState {
    header: Header,
    limit: AtomicU32,
    _pad: u32,
}

// SAFETY: repr(C), integers and atomics only, valid when zeroed.
unsafe impl SharedState for LimitState {
    fn header(&self) -> &Header {
        &self.header
    }
}

/// Version 1 of the concurrency limit's file.
const KIND_LIMIT: u32 = 0x0003_0001;

/// The offset of place 0: past the state, on a page of its own.
const PLACES_AT: u64 = 4096;

/// The first wait between two looks for a free place; it doubles up to [`LONGEST_POLL`].
const FIRST_POLL: Duration = Duration::from_millis(1);

/// The turnstile: a byte before the places, locked by the process whose waiter is next. A
/// place given back goes to that waiter — it looks every [`FIRST_POLL`] — and not to
/// whoever asks first: without it, a process that gives a place back and asks again at once
/// takes it from under a waiter that looks every few milliseconds, again and again.
const TURNSTILE_AT: u64 = PLACES_AT - 1;

/// This process's view of the file.
struct Held {
    /// Our own open file description of the file: every place we hold is locked through it.
    file: File,
    /// The process that opened `file`; another one (a forked child) opens its own.
    pid: u32,
    /// The places this process holds.
    places: BTreeSet<u32>,
    /// This process's waiters that are next (the turnstile is locked while there is one).
    next_in_turn: u32,
}

/// The places of a limit in a file.
pub(crate) struct FilePlaces {
    path: PathBuf,
    limit: u32,
    /// The file's device and inode: a forked child reopens only that very file.
    id: (u64, u64),
    held: Mutex<Held>,
    /// Woken when a place of this process is given back, so its waiting threads look again
    /// at once.
    freed: Condvar,
    waiting: Mutex<()>,
}

impl std::fmt::Debug for FilePlaces {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FilePlaces")
            .field("path", &self.path)
            .field("limit", &self.limit)
            .finish_non_exhaustive()
    }
}

/// `fcntl` with an open-file-description lock request on `[start, start + len)` of `file`.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn ofd(file: &File, get: bool, kind: i32, start: u64, len: u64) -> std::io::Result<libc::flock> {
    // SAFETY: flock is plain data; all zeros is a valid value.
    let mut fl: libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = kind as _;
    fl.l_whence = libc::SEEK_SET as _;
    fl.l_start = libc::off_t::try_from(start).map_err(|_| std::io::Error::other("offset"))?;
    fl.l_len = libc::off_t::try_from(len).map_err(|_| std::io::Error::other("length"))?;
    let cmd = if get {
        libc::F_OFD_GETLK
    } else {
        libc::F_OFD_SETLK
    };
    loop {
        // SAFETY: fcntl on a valid descriptor with a valid flock; l_pid is 0 as OFD locks ask.
        if unsafe { libc::fcntl(file.as_raw_fd(), cmd, &mut fl) } == 0 {
            return Ok(fl);
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn ofd(_: &File, _: bool, _: i32, _: u64, _: u64) -> std::io::Result<()> {
    Err(std::io::Error::other(
        "a concurrency limit in a shared file needs open-file-description locks (Linux)",
    ))
}

/// The error of a lock request the kernel refused for another reason than a conflict.
fn lock_error(e: std::io::Error) -> SharedError {
    if e.raw_os_error() == Some(libc::EINVAL) {
        return SharedError::Io(std::io::Error::other(
            "this kernel has no open-file-description locks (Linux 3.15 or later is needed \
             for a concurrency limit in a shared file)",
        ));
    }
    SharedError::Io(e)
}

fn getpid() -> u32 {
    std::process::id()
}

impl FilePlaces {
    /// Opens (or sets up) the limit of `limit` places in the file at `path`.
    pub(crate) fn open(path: &Path, limit: u32) -> Result<Self, SharedError> {
        let mapping = Mapping::open(
            path,
            KIND_LIMIT,
            |s: &LimitState| s.limit.store(limit, Ordering::Release),
            |s| {
                let found = s.limit.load(Ordering::Acquire);
                if found == limit {
                    Ok(())
                } else {
                    Err(SharedError::Mismatch(format!(
                        "{} holds a concurrency limit of {found}; this process asked for \
                         {limit}",
                        path.display()
                    )))
                }
            },
        )?;
        // Only the description is kept: the places are its locks, and the state is read once.
        let file = mapping.file()?;
        drop(mapping);
        let meta = file.metadata()?;
        let places = FilePlaces {
            path: path.to_path_buf(),
            limit,
            id: (meta.dev(), meta.ino()),
            held: Mutex::new(Held {
                file,
                pid: getpid(),
                places: BTreeSet::new(),
                next_in_turn: 0,
            }),
            freed: Condvar::new(),
            waiting: Mutex::new(()),
        };
        // Asks the kernel once, so that a kernel without these locks is refused here.
        places.count_held()?;
        Ok(places)
    }

    /// The file's path.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// This process's view, with a description of its own (a forked child opens one).
    fn held(&self) -> Result<MutexGuard<'_, Held>, SharedError> {
        let mut h = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        if h.pid != getpid() {
            let file = open_private(&self.path)?;
            let meta = file.metadata()?;
            if (meta.dev(), meta.ino()) != self.id {
                return Err(SharedError::Mismatch(format!(
                    "{} was replaced by another file since this limit opened it",
                    self.path.display()
                )));
            }
            // The parent's places are the parent's: this process holds none of them.
            *h = Held {
                file,
                pid: getpid(),
                places: BTreeSet::new(),
                next_in_turn: 0,
            };
        }
        Ok(h)
    }

    /// Takes a free place now, trying each in turn without blocking. A place held elsewhere
    /// is skipped with the whole lock that holds it (the kernel says how far it reaches), so
    /// a look costs a few calls per lock held, never one per place: a lock over every place
    /// cannot turn a look into billions of calls.
    fn try_take(self: &Arc<Self>) -> Result<Option<FilePlace>, SharedError> {
        let mut h = self.held()?;
        let limit = u64::from(self.limit);
        let mut next = 0u64;
        while next < limit {
            let place = u32::try_from(next).unwrap_or(u32::MAX);
            next += 1;
            if h.places.contains(&place) {
                continue;
            }
            let at = PLACES_AT + u64::from(place);
            match ofd(&h.file, false, libc::F_WRLCK, at, 1) {
                Ok(_) => {
                    h.places.insert(place);
                    return Ok(Some(FilePlace {
                        places: self.clone(),
                        place,
                    }));
                }
                Err(e) if matches!(e.raw_os_error(), Some(libc::EAGAIN | libc::EACCES)) => {
                    let fl = ofd(&h.file, true, libc::F_WRLCK, at, 1).map_err(lock_error)?;
                    if i32::from(fl.l_type) != libc::F_UNLCK {
                        let end = match u64::try_from(fl.l_len) {
                            Ok(0) | Err(_) => limit,
                            Ok(len) => u64::try_from(fl.l_start)
                                .unwrap_or(0)
                                .saturating_add(len)
                                .saturating_sub(PLACES_AT),
                        };
                        next = next.max(end.min(limit));
                    }
                }
                Err(e) => return Err(lock_error(e)),
            }
        }
        Ok(None)
    }

    /// Whether a waiter of another process is next (holds the turnstile): then a place given
    /// back is its, and this process does not take it unless its own waiter is next.
    fn another_is_next(&self) -> Result<bool, SharedError> {
        let h = self.held()?;
        // Our own lock never conflicts with our own question: only another's is seen.
        let fl = ofd(&h.file, true, libc::F_WRLCK, TURNSTILE_AT, 1).map_err(lock_error)?;
        Ok(i32::from(fl.l_type) != libc::F_UNLCK)
    }

    /// Makes one of this process's waiters next, when no other process's is: `true` when it
    /// is (give it back with [`end_turn`](Self::end_turn)).
    fn take_turn(&self) -> Result<bool, SharedError> {
        let mut h = self.held()?;
        if h.next_in_turn == 0 {
            match ofd(&h.file, false, libc::F_WRLCK, TURNSTILE_AT, 1) {
                Ok(_) => {}
                Err(e) if matches!(e.raw_os_error(), Some(libc::EAGAIN | libc::EACCES)) => {
                    return Ok(false)
                }
                Err(e) => return Err(lock_error(e)),
            }
        }
        h.next_in_turn += 1;
        Ok(true)
    }

    /// A waiter that was next is done (it has a place, or gave up waiting).
    fn end_turn(&self) {
        let mut h = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        if h.pid != getpid() || h.next_in_turn == 0 {
            return;
        }
        h.next_in_turn -= 1;
        if h.next_in_turn == 0 {
            // Unlocking cannot fail on a valid descriptor; if it did, the turnstile would come
            // back when this process ends.
            let _ = ofd(&h.file, false, libc::F_UNLCK, TURNSTILE_AT, 1);
        }
    }

    fn give_back(&self, place: u32) {
        let mut h = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        // In a forked child, the place is the parent's (the description is shared): leave it.
        if h.pid == getpid() && h.places.remove(&place) {
            // Unlocking cannot fail on a valid descriptor and range; if it did, the place
            // would come back when this process ends.
            let _ = ofd(
                &h.file,
                false,
                libc::F_UNLCK,
                PLACES_AT + u64::from(place),
                1,
            );
        }
        drop(h);
        let _w = self.waiting.lock().unwrap_or_else(PoisonError::into_inner);
        self.freed.notify_all();
    }

    /// The places held now, by every process: ours from our own set, the others' by asking
    /// the kernel (our own locks never conflict with our own question).
    pub(crate) fn count_held(&self) -> Result<u32, SharedError> {
        let h = self.held()?;
        let mut count = u64::try_from(h.places.len()).unwrap_or(u64::MAX);
        // Each answer is one lock (a range of places held by one description): count it and
        // look on both sides of it.
        let mut ranges = vec![(0u64, u64::from(self.limit))];
        while let Some((lo, hi)) = ranges.pop() {
            if lo >= hi {
                continue;
            }
            let fl =
                ofd(&h.file, true, libc::F_WRLCK, PLACES_AT + lo, hi - lo).map_err(lock_error)?;
            if i32::from(fl.l_type) == libc::F_UNLCK {
                continue;
            }
            let start = u64::try_from(fl.l_start).unwrap_or(0);
            let start = start.saturating_sub(PLACES_AT).clamp(lo, hi);
            let end = match u64::try_from(fl.l_len) {
                Ok(0) | Err(_) => hi,
                Ok(len) => (u64::try_from(fl.l_start).unwrap_or(0).saturating_add(len))
                    .saturating_sub(PLACES_AT)
                    .clamp(lo, hi),
            };
            if end <= start {
                // An answer outside the range asked: count nothing more (never loop).
                continue;
            }
            count += end - start;
            ranges.push((lo, start));
            ranges.push((end, hi));
        }
        Ok(u32::try_from(count.min(u64::from(self.limit))).unwrap_or(self.limit))
    }
}

/// A handle on the places of a file, as the limit's store.
#[derive(Debug)]
pub(crate) struct FileLimit(pub(crate) Arc<FilePlaces>);

/// One place held through the file, given back when dropped.
struct FilePlace {
    places: Arc<FilePlaces>,
    place: u32,
}

impl RemoteLease for FilePlace {
    fn renew(&self) -> Result<bool, SharedError> {
        // A lock has no lease: it is held until given back or its process ends.
        Ok(true)
    }
}

impl Drop for FilePlace {
    fn drop(&mut self) {
        self.places.give_back(self.place);
    }
}

impl RemoteLimit for FileLimit {
    fn limit(&self) -> u32 {
        self.0.limit
    }

    fn acquire(
        &self,
        timeout: Option<Duration>,
        _calls_until: Option<Instant>,
        cancel: &CancelToken,
    ) -> Result<Option<RemotePlace>, SharedError> {
        // A timeout too long to add to the clock is no timeout.
        let until = timeout.and_then(|t| Instant::now().checked_add(t));
        let mut poll = FIRST_POLL;
        // Whether this waiter is next: then it looks every FIRST_POLL, and no other process
        // takes a place given back (see TURNSTILE_AT).
        let mut next = false;
        let mut look = || loop {
            let free_for_us = next || !self.0.another_is_next()?;
            if free_for_us {
                if let Some(place) = self.0.try_take()? {
                    break Ok(Some(Box::new(place) as RemotePlace));
                }
            }
            if cancel.is_cancelled() {
                break Ok(None);
            }
            let mut wait = if next { FIRST_POLL } else { poll };
            if let Some(until) = until {
                let left = until.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    break Ok(None);
                }
                wait = wait.min(left);
            }
            if !next {
                next = self.0.take_turn()?;
            }
            let w = self
                .0
                .waiting
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            drop(
                self.0
                    .freed
                    .wait_timeout(w, wait)
                    .unwrap_or_else(PoisonError::into_inner),
            );
            poll = (poll * 2).min(LONGEST_POLL);
        };
        let taken = look();
        // Whatever the look came to — a place, a timeout, an error — the turn is over.
        if next {
            self.0.end_turn();
        }
        taken
    }
}

#[cfg(test)]
mod tests {
    use crate::{CancelToken, ConcurrencyLimit, LimitError, Rate, Regulator};
    use std::time::Duration;

    fn path(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("recuo-limit-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir.join("limit")
    }

    #[test]
    fn two_handles_on_one_file_share_its_places() {
        let file = path("share");
        let a = ConcurrencyLimit::shared(&file, 2).unwrap();
        // Another handle has its own description, as another process has.
        let b = ConcurrencyLimit::shared(&file, 2).unwrap();
        assert_eq!(
            (a.limit(), a.is_remote(), a.path()),
            (2, false, Some(&*file))
        );
        let p1 = a.try_acquire().unwrap().unwrap();
        assert_eq!((a.in_flight(), b.in_flight()), (1, 1));
        let p2 = b.try_acquire().unwrap().unwrap();
        assert!(a.try_acquire().unwrap().is_none());
        assert!(b.try_acquire().unwrap().is_none());
        assert_eq!((a.in_flight(), b.in_flight()), (2, 2));
        assert!(p1.renew().unwrap());
        drop(p1);
        assert_eq!((a.in_flight(), b.in_flight()), (1, 1));
        let p3 = b.try_acquire().unwrap().unwrap();
        assert_eq!(
            (b.in_flight(), b.max_in_flight(), a.max_in_flight()),
            (2, 2, 1)
        );
        drop((p2, p3));
        assert_eq!((a.in_flight(), b.in_flight()), (0, 0));
    }

    #[test]
    fn a_place_given_back_goes_to_the_waiter_that_is_next() {
        let file = path("turn");
        // Two handles, two open file descriptions: as two processes.
        let a = ConcurrencyLimit::shared(&file, 1).unwrap();
        let b = ConcurrencyLimit::shared(&file, 1).unwrap();
        let held = a.try_acquire().unwrap().unwrap();
        let waiter = std::thread::spawn(move || {
            let got = b.acquire(Some(Duration::from_secs(10)), &CancelToken::new());
            (got.unwrap(), b)
        });
        // A third description looks on, as a third process would.
        let observer = super::FilePlaces::open(&file, 1).unwrap();
        while !observer.another_is_next().unwrap() {
            std::thread::sleep(Duration::from_millis(1));
        }
        drop(held);
        // a gives its place back and asks again at once: the place is the waiter's.
        assert!(a.try_acquire().unwrap().is_none());
        let (permit, b) = waiter.join().unwrap();
        assert!(permit.is_some());
        assert_eq!((a.held_here(), b.held_here()), (0, 1));
        // The waiter's turn is over: a place given back is anyone's again.
        assert!(!observer.another_is_next().unwrap());
        drop(permit);
        assert!(a.try_acquire().unwrap().is_some());
    }

    #[test]
    fn threads_of_one_handle_never_share_a_place() {
        let file = path("threads");
        let l = ConcurrencyLimit::shared(&file, 3).unwrap();
        let other = ConcurrencyLimit::shared(&file, 3).unwrap();
        let cancel = CancelToken::new();
        let inside = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
        let most = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
        let threads: Vec<_> = (0..8)
            .map(|i| {
                let l = if i % 2 == 0 { l.clone() } else { other.clone() };
                let (cancel, inside, most) = (cancel.clone(), inside.clone(), most.clone());
                std::thread::spawn(move || {
                    for _ in 0..30 {
                        let _p = l.acquire(Some(Duration::from_secs(10)), &cancel);
                        let _p = _p.unwrap().unwrap();
                        let now = inside.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
                        most.fetch_max(now, std::sync::atomic::Ordering::SeqCst);
                        std::thread::yield_now();
                        inside.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(most.load(std::sync::atomic::Ordering::SeqCst), 3);
        assert_eq!((l.in_flight(), other.in_flight()), (0, 0));
    }

    #[test]
    fn waiting_ends_on_timeout_or_cancellation() {
        let file = path("wait");
        let l = ConcurrencyLimit::shared(&file, 1).unwrap();
        let _held = ConcurrencyLimit::shared(&file, 1)
            .unwrap()
            .try_acquire()
            .unwrap()
            .unwrap();
        let cancel = CancelToken::new();
        let t0 = std::time::Instant::now();
        assert!(l
            .acquire(Some(Duration::from_millis(30)), &cancel)
            .unwrap()
            .is_none());
        assert!(t0.elapsed() >= Duration::from_millis(30));
        let c = cancel.clone();
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            c.cancel();
        });
        assert!(l.acquire(None, &cancel).unwrap().is_none());
        t.join().unwrap();
        assert_eq!(l.in_flight(), 1);
    }

    #[test]
    fn a_place_given_back_in_this_process_wakes_a_waiter() {
        let file = path("wake");
        let l = ConcurrencyLimit::shared(&file, 1).unwrap();
        let held = l.try_acquire().unwrap().unwrap();
        let l2 = l.clone();
        let t = std::thread::spawn(move || {
            l2.acquire(Some(Duration::from_secs(10)), &CancelToken::new())
                .unwrap()
                .is_some()
        });
        std::thread::sleep(Duration::from_millis(30));
        drop(held);
        assert!(t.join().unwrap());
    }

    #[test]
    fn other_settings_and_hostile_files_are_refused() {
        let file = path("refused");
        assert!(matches!(
            ConcurrencyLimit::shared(&file, 0),
            Err(LimitError::ZeroLimit)
        ));
        assert_eq!(ConcurrencyLimit::shared(&file, 0).unwrap_err().code(), 56);
        let _l = ConcurrencyLimit::shared(&file, 2).unwrap();
        let e = ConcurrencyLimit::shared(&file, 3).unwrap_err();
        assert_eq!((e.code(), e.name()), (58, "shared_mismatch"));
        assert_eq!(
            e.to_string(),
            format!(
                "shared state: {} holds a concurrency limit of 2; this process asked for 3",
                file.display()
            )
        );

        // A regulator's file is another kind of state.
        let reg = path("regulator");
        Regulator::shared(&reg, "1/s".parse::<Rate>().unwrap(), 1).unwrap();
        let e = ConcurrencyLimit::shared(&reg, 2).unwrap_err();
        assert_eq!(e.code(), 58, "{e}");
        assert!(e.to_string().contains("kind"), "{e}");

        // A symbolic link is never followed.
        let link = file.with_file_name("link");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        let e = ConcurrencyLimit::shared(&link, 2).unwrap_err().to_string();
        assert!(e.contains("symbolic link"), "{e}");

        // A file others may write, junk, the wrong size: refused, never set up again.
        let open = path("mode");
        std::fs::write(&open, b"").unwrap();
        std::fs::set_permissions(&open, std::os::unix::fs::PermissionsExt::from_mode(0o666))
            .unwrap();
        let e = ConcurrencyLimit::shared(&open, 2).unwrap_err().to_string();
        assert!(e.contains("may write it"), "{e}");
        let junk = path("junk");
        std::fs::write(&junk, [7u8; std::mem::size_of::<super::LimitState>()]).unwrap();
        let e = ConcurrencyLimit::shared(&junk, 2).unwrap_err().to_string();
        assert!(e.contains("lacks recuo's mark"), "{e}");
        let long = path("long");
        std::fs::write(&long, [0u8; 4097]).unwrap();
        let e = ConcurrencyLimit::shared(&long, 2).unwrap_err().to_string();
        assert!(e.contains("4097 bytes"), "{e}");
        assert_eq!(std::fs::read(&junk).unwrap(), [7u8; 24]);
    }

    #[test]
    fn a_place_held_past_the_limit_by_a_hostile_lock_is_counted_once() {
        // Someone with the file open locks every byte from the places on: every place is
        // taken and counted, and nothing is counted twice.
        let file = path("hostile");
        let l = ConcurrencyLimit::shared(&file, 4).unwrap();
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&file)
            .unwrap();
        super::ofd(&f, false, libc::F_WRLCK, super::PLACES_AT + 1, 0).unwrap();
        assert_eq!(l.in_flight(), 3);
        let p = l.try_acquire().unwrap().unwrap();
        assert!(l.try_acquire().unwrap().is_none());
        assert_eq!(l.in_flight(), 4);
        drop(f);
        assert_eq!(l.in_flight(), 1);
        drop(p);
        assert_eq!(l.in_flight(), 0);
    }

    #[test]
    fn a_lock_over_every_place_of_the_largest_limit_is_answered_at_once() {
        let file = path("largest");
        let l = ConcurrencyLimit::shared(&file, u32::MAX).unwrap();
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&file)
            .unwrap();
        super::ofd(&f, false, libc::F_WRLCK, super::PLACES_AT, 0).unwrap();
        let t0 = std::time::Instant::now();
        assert!(l.try_acquire().unwrap().is_none());
        assert!(l
            .acquire(Some(Duration::from_millis(20)), &CancelToken::new())
            .unwrap()
            .is_none());
        assert_eq!(l.in_flight(), u32::MAX);
        assert!(t0.elapsed() < Duration::from_secs(5));
        drop(f);
        let _p = l.try_acquire().unwrap().unwrap();
        assert_eq!(l.in_flight(), 1);
    }

    #[test]
    fn a_set_up_interrupted_at_any_step_is_done_again_by_the_next_opener() {
        use crate::shm::{SetUpStep, INTERRUPT_AFTER};
        for step in [
            SetUpStep::SpaceReserved,
            SetUpStep::Marked,
            SetUpStep::SettingsWritten,
            SetUpStep::KindWritten,
        ] {
            let file = path(&format!("setup-{step:?}"));
            INTERRUPT_AFTER.with(|s| s.set(Some(step)));
            let e = ConcurrencyLimit::shared(&file, 2).unwrap_err().to_string();
            assert!(e.contains(&format!("interrupted after {step:?}")), "{e}");
            let l = ConcurrencyLimit::shared(&file, 2).unwrap();
            let _a = l.try_acquire().unwrap().unwrap();
            let _b = l.try_acquire().unwrap().unwrap();
            assert!(l.try_acquire().unwrap().is_none());
            assert!(ConcurrencyLimit::shared(&file, 1).is_err());
        }
    }
}
