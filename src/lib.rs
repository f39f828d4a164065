//! The `rewrite-class` command: rewrites a class file, a jar or a directory exactly as the agent would.

pub mod args;
pub mod targets;
