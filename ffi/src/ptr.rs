//! Checked conversions of the pointers C hands in. Every NULL check lives here.

use std::ffi::c_char;
use std::ptr::NonNull;

use crate::panic::{checked, Answer};
use crate::status::recuo_status::{
    self, RECUO_ERR_LENGTH_TOO_LARGE, RECUO_ERR_NOT_UTF8, RECUO_ERR_NULL_ARGUMENT,
};

/// The `len` bytes at `ptr`. A NULL `ptr` is allowed only with `len == 0`.
///
/// # Safety
/// When `len > 0`, `ptr` must point to `len` readable bytes that stay unchanged while the
/// returned slice lives.
pub(crate) unsafe fn bytes<'a>(ptr: *const c_char, len: usize) -> Result<&'a [u8], recuo_status> {
    // SAFETY: forwarded from the caller.
    unsafe { slice(ptr.cast::<u8>(), len) }
}

/// The `len` bytes at `ptr` as UTF-8 text: `RECUO_ERR_NOT_UTF8` when they are not.
///
/// # Safety
/// As [`bytes`].
pub(crate) unsafe fn text<'a>(ptr: *const c_char, len: usize) -> Result<&'a str, recuo_status> {
    // SAFETY: forwarded from the caller.
    let b = unsafe { bytes(ptr, len) }?;
    std::str::from_utf8(b).map_err(|_| RECUO_ERR_NOT_UTF8)
}

/// The `len` bytes at `ptr` as a file path: any bytes (a path need not be UTF-8 on Unix;
/// elsewhere it must be). A NUL inside is left for the operating system to refuse.
///
/// # Safety
/// As [`bytes`].
pub(crate) unsafe fn path<'a>(
    ptr: *const c_char,
    len: usize,
) -> Result<&'a std::path::Path, recuo_status> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        // SAFETY: forwarded from the caller.
        let b = unsafe { bytes(ptr, len) }?;
        Ok(std::path::Path::new(std::ffi::OsStr::from_bytes(b)))
    }
    #[cfg(not(unix))]
    {
        // SAFETY: forwarded from the caller.
        let s = unsafe { text(ptr, len) }?;
        Ok(std::path::Path::new(s))
    }
}

/// Whether there are values to read at `ptr`, `count` values of type `T`: none for a count
/// of 0 (a NULL `ptr` is allowed only then), `RECUO_ERR_NULL_ARGUMENT` for NULL,
/// `RECUO_ERR_LENGTH_TOO_LARGE` above `isize::MAX` bytes in all.
fn counted<T>(ptr: *const T, count: usize) -> Result<bool, recuo_status> {
    match count {
        0 => Ok(false),
        _ if ptr.is_null() => Err(RECUO_ERR_NULL_ARGUMENT),
        _ if count > isize::MAX as usize / std::mem::size_of::<T>().max(1) => {
            Err(RECUO_ERR_LENGTH_TOO_LARGE)
        }
        _ => Ok(true),
    }
}

/// The `count` values of type `T` at `ptr`. A NULL `ptr` is allowed only with `count == 0`.
///
/// # Safety
/// When `count > 0`, `ptr` must point to `count` initialised, aligned values of `T` that stay
/// unchanged while the returned slice lives.
pub(crate) unsafe fn slice<'a, T>(ptr: *const T, count: usize) -> Result<&'a [T], recuo_status> {
    // SAFETY: non-NULL, the total size ≤ isize::MAX, and the caller vouches for the values.
    Ok(if counted(ptr, count)? {
        unsafe { std::slice::from_raw_parts(ptr, count) }
    } else {
        &[]
    })
}

/// The `len` writable values of type `T` at `ptr`. A NULL `ptr` is allowed only with
/// `len == 0`.
///
/// # Safety
/// When `len > 0`, `ptr` must point to `len` writable, aligned values of `T` that nothing else
/// accesses while the returned slice lives.
pub(crate) unsafe fn slice_mut<'a, T>(
    ptr: *mut T,
    len: usize,
) -> Result<&'a mut [T], recuo_status> {
    if !counted(ptr, len)? {
        return Ok(&mut []);
    }
    // SAFETY: non-NULL, the total size ≤ isize::MAX, and the caller vouches for the memory.
    Ok(unsafe { std::slice::from_raw_parts_mut(ptr, len) })
}

/// A required input: `RECUO_ERR_NULL_ARGUMENT` when NULL.
///
/// # Safety
/// A non-NULL `ptr` must point to a live, initialised `T` that stays unchanged while the
/// reference lives.
pub(crate) unsafe fn input<'a, T>(ptr: *const T) -> Result<&'a T, recuo_status> {
    // SAFETY: forwarded from the caller.
    unsafe { ptr.as_ref() }.ok_or(RECUO_ERR_NULL_ARGUMENT)
}

/// A required handle to change: `RECUO_ERR_NULL_ARGUMENT` when NULL.
///
/// # Safety
/// A non-NULL `ptr` must point to a live `T` that nothing else accesses while the reference
/// lives.
pub(crate) unsafe fn handle<'a, T>(ptr: *mut T) -> Result<&'a mut T, recuo_status> {
    // SAFETY: forwarded from the caller.
    unsafe { ptr.as_mut() }.ok_or(RECUO_ERR_NULL_ARGUMENT)
}

/// A required output: `RECUO_ERR_NULL_ARGUMENT` when NULL.
pub(crate) fn out<T>(ptr: *mut T) -> Result<Out<T>, recuo_status> {
    NonNull::new(ptr).map(Out).ok_or(RECUO_ERR_NULL_ARGUMENT)
}

/// A checked, non-NULL output pointer, written once after all the work has succeeded.
pub(crate) struct Out<T>(NonNull<T>);

impl<T: Copy> Out<T> {
    /// Stores `value` (without reading or dropping what was there: C memory may be
    /// uninitialised).
    ///
    /// # Safety
    /// The pointer must be valid for writes and aligned for `T`.
    pub(crate) unsafe fn write(self, value: T) {
        // SAFETY: non-NULL by construction; validity and alignment are the caller's promise.
        unsafe { self.0.as_ptr().write(value) }
    }
}

/// Stores a new handle in `*out`.
///
/// # Safety
/// `out` must be a checked output.
pub(crate) unsafe fn store<T>(out: Out<*mut T>, value: T) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe { out.write(Box::into_raw(Box::new(value))) };
    recuo_status::RECUO_OK
}

/// The body of a shim that makes a handle: [`fill`] with the value `make` answers, boxed
/// (`*out` untouched on an error).
///
/// # Safety
/// `out` must be NULL or valid for writes.
pub(crate) unsafe fn make<T>(
    out: *mut *mut T,
    make: impl FnOnce() -> Result<T, recuo_status>,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe { fill(out, || make().map(|value| Box::into_raw(Box::new(value)))) }
}

/// Frees a handle made by [`Box::into_raw`]; NULL is ignored.
///
/// # Safety
/// `ptr` must be NULL or come from `Box::into_raw` and not have been freed.
pub(crate) unsafe fn free<T>(ptr: *mut T) {
    if !ptr.is_null() {
        // SAFETY: the caller vouches that it came from Box::into_raw and is freed once.
        drop(unsafe { Box::from_raw(ptr) });
    }
}

/// Runs `change` on the handle behind `ptr`, inside the panic boundary: its answer, or
/// `RECUO_ERR_NULL_ARGUMENT`.
///
/// # Safety
/// As [`handle`].
pub(crate) unsafe fn with<T, A: Answer>(
    ptr: *mut T,
    change: impl FnOnce(&mut T) -> A,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    checked(|| Ok(change(unsafe { handle(ptr) }?)))
}

/// [`with`], given `arg`, read before: its error comes first (then nothing changes).
///
/// # Safety
/// As [`handle`].
pub(crate) unsafe fn with_read<T, V, A: Answer>(
    ptr: *mut T,
    arg: Result<V, recuo_status>,
    change: impl FnOnce(&mut T, V) -> A,
) -> recuo_status {
    checked(|| {
        let arg = arg?;
        // SAFETY: forwarded from the caller.
        Ok(change(unsafe { handle(ptr) }?, arg))
    })
}

/// Runs `read` on the value behind `ptr`, inside the panic boundary: its answer, or
/// `RECUO_ERR_NULL_ARGUMENT`.
///
/// # Safety
/// As [`input`].
pub(crate) unsafe fn with_ref<T, A: Answer>(
    ptr: *const T,
    read: impl FnOnce(&T) -> A,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    checked(|| Ok(read(unsafe { input(ptr) }?)))
}

/// The body of a shim that answers one value: inside the panic boundary, checks `out` first,
/// then writes what `make` answers to it (`RECUO_OK`), or answers `make`'s error (`*out`
/// untouched).
///
/// # Safety
/// `out` must be NULL or valid for writes and aligned for `T`.
pub(crate) unsafe fn fill<T: Copy>(
    out: *mut T,
    make: impl FnOnce() -> Result<T, recuo_status>,
) -> recuo_status {
    checked(|| {
        let (out, value) = (self::out(out)?, make()?);
        // SAFETY: a checked output; the caller vouches for the rest.
        unsafe { out.write(value) };
        Ok(recuo_status::RECUO_OK)
    })
}

/// Writes `value` to the optional output `ptr` (nothing when NULL).
///
/// # Safety
/// `ptr` must be NULL or valid for writes and aligned for `T`.
pub(crate) unsafe fn put<T: Copy>(ptr: *mut T, value: T) {
    if !ptr.is_null() {
        // SAFETY: non-NULL; validity and alignment are the caller's promise.
        unsafe { ptr.write(value) }
    }
}

/// A handle C shares with recuo (a pool, a gate, a recorder, a limit): what recuo keeps of
/// it is a clone of the core's value behind it, so that each may be freed in any order.
pub(crate) trait Shared {
    /// The core's value behind the handle.
    type Core: Clone;

    /// The core's value behind the handle.
    fn core(&self) -> &Self::Core;
}

/// The core's value behind the shared handle `ptr`, cloned: `RECUO_ERR_NULL_ARGUMENT` when
/// NULL.
///
/// # Safety
/// As [`input`].
pub(crate) unsafe fn shared<H: Shared>(ptr: *const H) -> Result<H::Core, recuo_status> {
    // SAFETY: forwarded from the caller.
    unsafe { input(ptr) }.map(|h| h.core().clone())
}

/// Makes each handle `name(pub(crate) Core)` a [`Shared`] handle of its core value.
macro_rules! shared_handles {
    ($($name:ty => $core:ty),+ $(,)?) => {
        $(impl Shared for $name {
            type Core = $core;

            fn core(&self) -> &$core {
                &self.0
            }
        })+
    };
}

shared_handles!(
    crate::pool::recuo_attempt_pool => recuo::AttemptPool,
    crate::stats::recuo_stats_recorder => recuo::StatsRecorder,
    crate::cancel::recuo_cancel_token => recuo::CancelToken,
    crate::regulator::recuo_regulator => recuo::Regulator,
    crate::limit::recuo_concurrency_limit => recuo::ConcurrencyLimit,
    crate::budget::recuo_retry_budget => recuo::RetryBudget,
    crate::gate::recuo_gate => recuo::Gate,
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn null_is_refused_unless_the_length_is_zero() {
        // SAFETY: NULL pointers are never dereferenced by `bytes`.
        unsafe {
            assert_eq!(bytes(std::ptr::null(), 0), Ok(&[][..]));
            assert_eq!(bytes(std::ptr::null(), 1), Err(RECUO_ERR_NULL_ARGUMENT));
        }
        assert!(out(std::ptr::null_mut::<u64>()).is_err());
        // SAFETY: an optional output: NULL is ignored.
        unsafe { put(std::ptr::null_mut::<u64>(), 1) };
    }

    #[test]
    fn text_must_be_utf8() {
        let ok = b"GET";
        let bad = b"G\xffT";
        // SAFETY: live slices.
        unsafe {
            assert_eq!(text(ok.as_ptr().cast(), 3), Ok("GET"));
            assert_eq!(text(bad.as_ptr().cast(), 3), Err(RECUO_ERR_NOT_UTF8));
            assert_eq!(text(std::ptr::null(), 0), Ok(""));
        }
    }

    #[test]
    fn slices_check_null_and_size() {
        let xs = [1u64, 2, 3];
        // SAFETY: live arrays; the NULL and size checks come before any read.
        unsafe {
            assert_eq!(slice(xs.as_ptr(), 3), Ok(&xs[..]));
            assert_eq!(slice(std::ptr::null::<u64>(), 0), Ok(&[][..]));
            assert_eq!(
                slice(std::ptr::null::<u64>(), 1),
                Err(RECUO_ERR_NULL_ARGUMENT)
            );
            assert_eq!(
                slice(xs.as_ptr(), usize::MAX / 4),
                Err(RECUO_ERR_LENGTH_TOO_LARGE)
            );
            let mut ys = [0u64; 2];
            assert_eq!(slice_mut(ys.as_mut_ptr(), 2).map(|s| s.len()), Ok(2));
            assert_eq!(
                slice_mut(std::ptr::null_mut::<u64>(), 2).map(|s| s.len()),
                Err(RECUO_ERR_NULL_ARGUMENT)
            );
            assert!(input(std::ptr::null::<u64>()).is_err());
            assert!(handle(std::ptr::null_mut::<u64>()).is_err());
        }
    }

    #[test]
    fn absurd_lengths_are_refused_before_any_read() {
        let x = 0u8;
        let p = (&x as *const u8).cast::<c_char>();
        // SAFETY: the length check happens before the pointer is used.
        let r = unsafe { bytes(p, usize::MAX) };
        assert_eq!(r, Err(RECUO_ERR_LENGTH_TOO_LARGE));
    }

    #[test]
    fn writes_land() {
        let mut v = 0u64;
        // SAFETY: `v` is a live, aligned u64.
        unsafe { out(&mut v).unwrap().write(42) };
        assert_eq!(v, 42);
    }
}
