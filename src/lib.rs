//! The command-line tools: `rewrite-class` rewrites a class file, a jar or a directory exactly as the
//! agent would; `instr` reports, draws and compares the profiles the agent writes, attaches the agent to a
//! running JVM and controls it there.

pub mod args;
pub mod attach;
pub mod ctl;
pub mod instr;
pub mod targets;
