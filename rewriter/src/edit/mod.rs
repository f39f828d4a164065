//! The bytecode editor: plan insertions for a method, lay the new code out, and write it with every
//! offset-carrying structure relocated.

pub mod insertions;
pub mod layout;
pub mod method_writer;
pub mod stack_depth;
pub mod type_flow;
pub mod type_simulation;
pub mod widening_frames;

pub use insertions::{Insertions, Place};
pub use method_writer::FrameMode;
