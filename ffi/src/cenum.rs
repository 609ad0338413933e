//! The C enums: numbers in, constants out, names.
//!
//! C may hand recuo any `uint32_t` where the header says `recuo_jitter` (in C11 the enum's
//! typedef is `uint32_t`), so a number coming from C is never transmuted into a Rust enum:
//! function parameters are `u32`, struct fields are read through `u32` mirrors, and both are
//! converted with `from_code`, which answers `None` for a number that is no constant.

use std::ffi::{c_char, CStr};

/// Gives a `#[repr(u32)]` C enum its table of constants, `from_code` and `name`.
macro_rules! c_enum {
    ($name:ident { $($variant:ident => $text:literal),+ $(,)? }) => {
        impl $name {
            /// Every constant, in declaration order.
            #[allow(dead_code)]
            pub(crate) const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The constant numbered `code`, if there is one.
            pub(crate) fn from_code(code: u32) -> Option<Self> {
                Self::ALL.iter().copied().find(|v| *v as u32 == code)
            }

            /// The constant's stable lower-case name.
            pub(crate) const fn name(self) -> &'static std::ffi::CStr {
                match self {
                    $($name::$variant => $text),+
                }
            }
        }
    };
}

pub(crate) use c_enum;

/// The name of the constant numbered `code`, or `"unknown"`: what the `recuo_*_name`
/// functions return (static strings).
pub(crate) fn name_or_unknown<E>(
    code: u32,
    from_code: impl Fn(u32) -> Option<E>,
    name: impl Fn(E) -> &'static CStr,
) -> *const c_char {
    from_code(code).map_or(c"unknown", name).as_ptr()
}
