//! Stub: the real crate is being written. Public entry points promised to the bench and tests.
pub type Result<T> = std::result::Result<T, String>;
/// Parses a class file and writes it back with no edits (byte-identical output).
pub fn read_write(bytes: &[u8]) -> Result<Vec<u8>> { Ok(bytes.to_vec()) }
/// Inserts a `nop` at every method entry, before every return and after every array allocation.
pub fn nop_edit(bytes: &[u8]) -> Result<Vec<u8>> { Ok(bytes.to_vec()) }
