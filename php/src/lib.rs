//! placeholder: the PHP extension (being written)
