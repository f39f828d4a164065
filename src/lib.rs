//! The command-line tools: `rewrite-class` rewrites a class file, a jar or a directory exactly as the
//! agent would; `instr` reports, draws and compares the profiles the agent writes.

pub mod args;
pub mod instr;
pub mod targets;
