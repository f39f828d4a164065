//! The agent's one foreign-function layer: every raw JNI and JVMTI call, every function the VM calls, and
//! the one panic guard. The rest of the agent is safe Rust: the crate denies `unsafe_code` and only this
//! module allows it (`tests/ffi_layer.rs` checks both, and that every exported symbol and registered
//! callback is one of this module's guarded trampolines).
//!
//! Rules for what lives here:
//! - Handles are made here only, from pointers the VM handed in: [`Jni`] and [`Jvmti`] have no public
//!   constructor, so safe code cannot forge one.
//! - Object references (`jobject`, `jclass`) are opaque: safe code passes them back to the VM through the
//!   wrappers and never dereferences them.
//! - Every entry point runs its body through [`guard::guard`], with the policy of that entry point.
//! - A callback that calls Java keeps the program's pending exception ([`Jni::keeping_pending_exception`]).
//! - Signal handlers (the sampler's SIGPROF handler, signals.rs) may use the async-signal-safe subset only: no
//!   allocation, no lock, no JNI or JVMTI call but AsyncGetCallTrace, no `println!`, no guard that
//!   prints (their policy is `Report::Counted`), only atomics and writes into memory allocated before
//!   the signal was enabled.
#![allow(unsafe_code)]
// References are opaque handles the wrappers pass back to the VM without dereferencing them.
#![allow(clippy::not_unsafe_ptr_arg_deref)]

pub mod events;
pub mod guard;
pub mod java_vm;
pub mod jni;
pub mod jni_ext;
pub mod jni_functions;
pub mod jvmti;
pub mod jvmti_ext;
pub mod libc;
pub mod libjvm;
pub mod management;
pub mod natives;
pub mod retransform;
pub mod signals;
pub mod vm_flags;

pub use jni::Jni;
pub use jvmti::Jvmti;
