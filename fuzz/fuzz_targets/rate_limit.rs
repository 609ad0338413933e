#![no_main]
//! cargo-fuzz entry of [`recuo_fuzz::rate_limit`]: the checks live in the library, shared with the
//! corpus replay of `make test`.
libfuzzer_sys::fuzz_target!(|data: &[u8]| recuo_fuzz::rate_limit(data));
