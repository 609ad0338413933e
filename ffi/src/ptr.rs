//! Checked conversions of the pointers C hands in. Every NULL check lives here.

use std::ffi::c_char;
use std::ptr::NonNull;

use crate::status::recuo_status::{self, RECUO_ERR_LENGTH_TOO_LARGE, RECUO_ERR_NULL_ARGUMENT};

/// The `len` bytes at `ptr`. A NULL `ptr` is allowed only with `len == 0`.
///
/// # Safety
/// When `len > 0`, `ptr` must point to `len` readable bytes that stay unchanged while the
/// returned slice lives.
pub(crate) unsafe fn bytes<'a>(ptr: *const c_char, len: usize) -> Result<&'a [u8], recuo_status> {
    if len == 0 {
        return Ok(&[]);
    }
    if ptr.is_null() {
        return Err(RECUO_ERR_NULL_ARGUMENT);
    }
    if len > isize::MAX as usize {
        return Err(RECUO_ERR_LENGTH_TOO_LARGE);
    }
    // SAFETY: non-NULL, len ≤ isize::MAX, and the caller vouches for the bytes.
    Ok(unsafe { std::slice::from_raw_parts(ptr.cast::<u8>(), len) })
}

/// A required output: `RECUO_ERR_NULL_ARGUMENT` when NULL.
pub(crate) fn out<T>(ptr: *mut T) -> Result<Out<T>, recuo_status> {
    NonNull::new(ptr).map(Out).ok_or(RECUO_ERR_NULL_ARGUMENT)
}

/// An optional output: `None` when NULL.
pub(crate) fn optional_out<T>(ptr: *mut T) -> Option<Out<T>> {
    NonNull::new(ptr).map(Out)
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
        assert!(optional_out(std::ptr::null_mut::<u64>()).is_none());
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
