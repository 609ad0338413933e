//! What the WebAssembly build takes from its JavaScript host, and gives it: the host's clocks
//! and randomness (a module has no system to ask: `performance.now()`, `Date.now()` and
//! `crypto.getRandomValues()` stand in), and memory the host writes arguments into and reads
//! results from. Only in the `wasm32` build; no C program sees these functions.
#![allow(unsafe_code)]

use std::alloc::{alloc, dealloc, Layout};

// The host's functions, imported from the module `recuo_host`.
#[link(wasm_import_module = "recuo_host")]
unsafe extern "C" {
    /// Nanoseconds on the host's monotonic clock (`performance.now()`), as a double.
    #[link_name = "monotonic_ns"]
    fn host_monotonic_ns() -> f64;
    /// Milliseconds since the Unix epoch (`Date.now()`), as a double.
    #[link_name = "unix_ms"]
    fn host_unix_ms() -> f64;
    /// Fills `len` bytes at `ptr` with random bytes (`crypto.getRandomValues`).
    #[link_name = "random_fill"]
    fn host_random_fill(ptr: *mut u8, len: usize);
}

fn monotonic_ns() -> u64 {
    // SAFETY: an imported function with no arguments; a double converts saturating.
    let ns = unsafe { host_monotonic_ns() };
    if ns.is_finite() && ns > 0.0 {
        ns as u64
    } else {
        0
    }
}

fn unix_ms() -> i64 {
    // SAFETY: as above.
    let ms = unsafe { host_unix_ms() };
    if ms.is_finite() {
        ms as i64
    } else {
        0
    }
}

/// Gives the core the host's clocks. The host calls it once, right after instantiating the
/// module and before any other call.
#[no_mangle]
pub extern "C" fn recuo_wasm_init() {
    recuo::set_host_clocks(recuo::HostClocks {
        monotonic_ns,
        unix_ms,
    });
}

/// The layout of `len` bytes the host asks for: aligned for any C value.
fn layout(len: usize) -> Option<Layout> {
    Layout::from_size_align(len.max(1), 8).ok()
}

/// `len` bytes of the module's memory for the host to write into (NULL when there is no
/// room); give them back with [`recuo_wasm_free`] and the same `len`.
#[no_mangle]
pub extern "C" fn recuo_wasm_alloc(len: usize) -> *mut u8 {
    match layout(len) {
        // SAFETY: a layout of non-zero size.
        Some(l) => unsafe { alloc(l) },
        None => std::ptr::null_mut(),
    }
}

/// Gives back what [`recuo_wasm_alloc`] gave for `len`. NULL is ignored.
///
/// # Safety
/// `ptr` is NULL or came from `recuo_wasm_alloc(len)` and was not given back yet.
#[no_mangle]
pub unsafe extern "C" fn recuo_wasm_free(ptr: *mut u8, len: usize) {
    if let (false, Some(l)) = (ptr.is_null(), layout(len)) {
        // SAFETY: allocated by `recuo_wasm_alloc` with this very layout (the caller's word).
        unsafe { dealloc(ptr, l) }
    }
}

/// getrandom's source of randomness in this build: the host's `crypto.getRandomValues`.
///
/// # Safety
/// `dest` points to `len` writable bytes (getrandom's contract).
#[no_mangle]
unsafe extern "Rust" fn __getrandom_v03_custom(
    dest: *mut u8,
    len: usize,
) -> Result<(), getrandom::Error> {
    // SAFETY: forwarded from getrandom, which hands `len` writable bytes.
    unsafe { host_random_fill(dest, len) };
    Ok(())
}
