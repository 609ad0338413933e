//! Empty: this package only pins redis-cell for `make bench-redis` (see Cargo.toml).
