//! `libinstr.so`, the JVMTI agent. It only links the rewriter for now; the agent itself is issue 4.

/// The rewriter the agent will run in ClassFileLoadHook.
pub use instr_rewriter as rewriter;
