#![no_main]
//! cargo-fuzz entry of [`recuo_fuzz::shared_file`]: the checks live in the library, shared with the
//! corpus replay of `make test`.
libfuzzer_sys::fuzz_target!(|data: &[u8]| recuo_fuzz::shared_file(data));
