//! Edits that insert code. Each is a small [`MethodEdit`](crate::rewrite::MethodEdit).

pub mod nop;
pub mod selection;

pub use selection::Selection;
