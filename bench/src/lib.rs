//! Benchmarks only: see `benches/`. Run them with `make bench`.
