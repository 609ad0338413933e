//! placeholder: the C ABI (being written)
