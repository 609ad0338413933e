//! placeholder: the Python module (being written)
