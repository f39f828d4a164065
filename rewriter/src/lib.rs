//! A lossless JVM class-file reader, writer and bytecode editor, in pure Rust.
//!
//! Reading borrows from the input; writing builds a fresh buffer and copies everything that was not
//! edited, so an unedited class comes out byte for byte as it went in. Editing inserts straight-line
//! code at method entry and before or after instructions, and relocates every structure that holds a
//! bytecode offset: branches (widened when they no longer fit), switches, the exception table, the
//! StackMapTable, the debug tables and type annotations.
//!
//! ```
//! use instr_rewriter::{rewrite, probes::nop::NopEdit, Options};
//! # fn demo(class_bytes: &[u8]) -> instr_rewriter::Result<()> {
//! let result = rewrite(class_bytes, &NopEdit, Options::default())?;
//! let new_bytes = result.bytes.as_deref().unwrap_or(class_bytes);
//! # let _ = new_bytes; Ok(()) }
//! ```
#![forbid(unsafe_code)]

pub mod attributes;
pub mod bytecode;
pub mod bytes;
pub mod class_writer;
pub mod classfile;
pub mod constant_pool;
pub mod descriptor;
pub mod dump;
pub mod edit;
pub mod error;
pub mod pool_builder;
pub mod probes;
pub mod references;
pub mod rewrite;

pub use edit::FrameMode;
pub use error::{Error, ErrorKind, Result};
pub use rewrite::{rewrite, MethodEdit, MethodView, Options, Rewritten};

/// Parses a class file and writes it back with no edits. The output is byte-identical to the input.
pub fn read_write(bytes: &[u8]) -> Result<Vec<u8>> {
    let class = classfile::ClassFile::read(bytes)?;
    let pool = pool_builder::PoolBuilder::new(&class.pool);
    let mut out = Vec::with_capacity(bytes.len());
    class_writer::write_class(&class, &pool, &vec![None; class.methods.len()], &mut out);
    Ok(out)
}

/// Applies the self-test edit ([`probes::nop::NopEdit`]) and returns the new class bytes.
pub fn nop_edit(bytes: &[u8]) -> Result<Vec<u8>> {
    let r = rewrite(bytes, &probes::nop::NopEdit, Options::default())?;
    Ok(r.bytes.unwrap_or_else(|| bytes.to_vec()))
}

/// Decodes and re-encodes every method's code and offset tables without inserting anything.
/// With [`FrameMode::Rebuild`] every StackMapTable is fully decoded and encoded again.
pub fn reencode(bytes: &[u8], frames: FrameMode) -> Result<Vec<u8>> {
    let r = rewrite(
        bytes,
        &probes::nop::NoEdit,
        Options {
            frames,
            force_reencode: true,
        },
    )?;
    Ok(r.bytes.unwrap_or_else(|| bytes.to_vec()))
}
