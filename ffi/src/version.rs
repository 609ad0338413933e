//! The library's version, as the core reports it.

use std::ffi::CStr;

use crate::prelude::*;

/// `recuo::VERSION` as a C string. This crate and the core share the workspace version; the
/// assertion below refuses to compile if they ever differ.
const VERSION: &CStr =
    match CStr::from_bytes_with_nul(concat!(env!("CARGO_PKG_VERSION"), "\0").as_bytes()) {
        Ok(v) => v,
        Err(_) => panic!("the package version contains a NUL byte"),
    };

const fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

const _: () = assert!(
    same(recuo::VERSION, env!("CARGO_PKG_VERSION")),
    "recuo-ffi and recuo must share one version"
);

/// The version of the library actually loaded, such as `"0.1.0"`: compare it with the
/// `RECUO_VERSION` macro to detect a header/library mismatch.
///
/// The string is static: never free it. NULL only if recuo panicked.
#[no_mangle]
pub extern "C" fn recuo_version() -> *const c_char {
    boundary(|| VERSION.as_ptr())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_c_version_is_the_core_version() {
        // SAFETY: recuo_version returns a static NUL-terminated string.
        let v = unsafe { CStr::from_ptr(recuo_version()) };
        assert_eq!(v.to_str(), Ok(recuo::VERSION));
        assert!(!same("0.1.0", "0.1.1") && !same("0.1", "0.1.0") && same("", ""));
    }
}
