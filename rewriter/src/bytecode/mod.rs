//! The instruction set and the decoding of code arrays.

pub mod instructions;
pub mod opcode;
