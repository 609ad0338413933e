//! The C enums: numbers in, constants out, names.
//!
//! C may hand recuo any `uint32_t` where the header says `recuo_jitter` (in C11 the enum's
//! typedef is `uint32_t`), so a number coming from C is never transmuted into a Rust enum:
//! function parameters are `u32`, struct fields are read through `u32` mirrors, and both are
//! converted with `from_code`, which answers `None` for a number that is no constant.

/// Gives a `#[repr(u32)]` C enum its table of constants, `from_code`, `from_c`, `name` and
/// `name_of`.
///
/// Written `c_enum!(recuo_x: Core { RECUO_X_A = [Core::A] => c"a", … })`, for a C enum that
/// mirrors the core's `Core` constant for constant, it also gives `to_core`, `from_core` and
/// `core_of`. The core's values in brackets may be any patterns that are also expressions
/// (`RECUO_X_NONE = [None]`, for an `Option` of the core's enum), and further core values
/// that the constant also stands for may follow, each in brackets after `|` (`from_core`
/// reads them too; `to_core` answers the first).
macro_rules! c_enum {
    ($name:ident: $core:ty {
        $($variant:ident = [$($cv:tt)+] $(| [$($alt:tt)+])* => $text:literal),+ $(,)?
    }) => {
        c_enum!($name { $($variant => $text),+ });

        #[allow(dead_code)]
        impl $name {
            /// The core's value this constant stands for.
            pub(crate) const fn to_core(self) -> $core {
                match self {
                    $($name::$variant => $($cv)+),+
                }
            }

            /// The constant that stands for the core's `value`.
            pub(crate) const fn from_core(value: $core) -> Self {
                match value {
                    $($($cv)+ $(| $($alt)+)* => $name::$variant),+
                }
            }

            /// The core's value for the C number `code`: `RECUO_ERR_INVALID_ENUM` for a
            /// number that is no constant.
            pub(crate) fn core_of(code: u32) -> Result<$core, crate::status::recuo_status> {
                Self::from_c(code).map(Self::to_core)
            }
        }
    };
    ($name:ident { $($variant:ident => $text:literal),+ $(,)? }) => {
        impl $name {
            /// Every constant, in declaration order.
            #[allow(dead_code)]
            pub(crate) const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The constant numbered `code`, if there is one.
            pub(crate) fn from_code(code: u32) -> Option<Self> {
                Self::ALL.iter().copied().find(|v| *v as u32 == code)
            }

            /// The constant numbered `code`: `RECUO_ERR_INVALID_ENUM` when there is none.
            #[allow(dead_code)]
            pub(crate) fn from_c(code: u32) -> Result<Self, crate::status::recuo_status> {
                Self::from_code(code).ok_or(crate::status::recuo_status::RECUO_ERR_INVALID_ENUM)
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
}

pub(crate) use c_enum;

/// Declares the private mirror `Raw` of the C struct `C` (or of several C structs of one
/// layout), with every enum field read as the plain number it is (`u32`), and checks at
/// compile time that they have one layout: `mirror!(RawX: recuo_x { kind: u32, status: u16 })`.
macro_rules! mirror {
    (@check $raw:ident: { $($field:ident),+ }) => {};
    (@check $raw:ident: $c:ty $(, $more:ty)* { $($field:ident),+ }) => {
        const _: () = assert!(
            std::mem::size_of::<$raw>() == std::mem::size_of::<$c>()
                && std::mem::align_of::<$raw>() == std::mem::align_of::<$c>()
                $(&& std::mem::offset_of!($raw, $field) == std::mem::offset_of!($c, $field))+
        );
        mirror!(@check $raw: $($more),* { $($field),+ });
    };
    ($(#[$doc:meta])* $raw:ident: $($c:ty),+ { $($field:ident: $ty:ty),+ $(,)? }) => {
        $(#[$doc])*
        #[repr(C)]
        #[derive(Clone, Copy)]
        pub(crate) struct $raw {
            $(pub(crate) $field: $ty),+
        }

        mirror!(@check $raw: $($c),+ { $($field),+ });
    };
}

pub(crate) use mirror;

/// The struct literal `$to { … }` whose fields named before the `;` are copied from the
/// fields of the same names of `$from`, the others given after it:
/// `copied!(recuo_x { a, b; c: 0, } from core)`. Written `from core: Core` with no `;`, every
/// field of both is copied (a field added to either is then a compile error until the other
/// has it too).
macro_rules! copied {
    ($to:ident { $($same:ident),+; $($field:ident: $value:expr,)* } from $from:expr) => {
        $to { $($same: $from.$same,)+ $($field: $value,)* }
    };
    ($to:ident { $($same:ident),+ } from $from:ident: $core:ident) => {{
        let $core { $($same),+ } = $from;
        $to { $($same),+ }
    }};
}

pub(crate) use copied;
