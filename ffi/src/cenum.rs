//! The C enums: numbers in, constants out, names.
//!
//! C may hand recuo any `uint32_t` where the header says `recuo_jitter` (in C11 the enum's
//! typedef is `uint32_t`), so a number coming from C is never transmuted into a Rust enum:
//! function parameters are `u32`, struct fields are read through `u32` mirrors, and both are
//! converted with `from_code`, which answers `None` for a number that is no constant.

/// Gives a `#[repr(u32)]` C enum its table of constants, `from_code`, `name` and `name_of`.
///
/// Written `c_enum!(recuo_x: Core { RECUO_X_A = Core::A => c"a", … })`, for a C enum that
/// mirrors the core's enum `Core` constant for constant, it also gives `to_core` and
/// `from_core`.
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

            /// The name of the constant numbered `code`, or `"unknown"`: what the
            /// `recuo_*_name` functions return (static strings; NULL only after a panic).
            #[allow(dead_code)]
            pub(crate) fn name_of(code: u32) -> *const std::ffi::c_char {
                crate::panic::boundary(|| {
                    Self::from_code(code).map_or(c"unknown", Self::name).as_ptr()
                })
            }
        }
    };
    ($name:ident: $core:ty { $($variant:ident = $core_variant:path => $text:literal),+ $(,)? }) => {
        c_enum!($name { $($variant => $text),+ });

        #[allow(dead_code)]
        impl $name {
            /// The core's value this constant stands for.
            pub(crate) const fn to_core(self) -> $core {
                match self {
                    $($name::$variant => $core_variant),+
                }
            }

            /// The constant that stands for the core's `value`.
            pub(crate) const fn from_core(value: $core) -> Self {
                match value {
                    $($core_variant => $name::$variant),+
                }
            }
        }
    };
}

pub(crate) use c_enum;
