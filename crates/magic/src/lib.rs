//! magic
