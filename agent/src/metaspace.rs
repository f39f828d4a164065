//! Room in metaspace for what the agent adds to it, so that the program meets its first metadata GC where
//! it would without the agent.
//!
//! HotSpot starts a concurrent GC cycle the first time the class metadata passes `MetaspaceSize` (21 MB by
//! default on 64-bit), and G1 resizes the heap at that cycle's remark. Under the agent the metadata grows
//! by 7-12 MB on every workload of the kit (bench/README.md, 2026-11-27, "the agent's metadata"): the
//! JDK's classes leave the shared archive when the early class hook turns it off, and rewritten classes are
//! larger. fop (14 MB without the agent) and javac then cross the threshold, and pay for cycles and a
//! smaller heap that the program alone never had. So, when the user left `MetaspaceSize` at its default,
//! the agent raises it by [`AGENT_METADATA`] before the VM reads it. An explicit `-XX:MetaspaceSize` is
//! kept as given, and nothing is changed on a VM that does not describe its flags (ffi/vm_flags.rs).

use crate::ffi::vm_flags;

/// More than the largest growth measured (12 MB, fop on JDK 25 with the early class hook).
pub const AGENT_METADATA: usize = 16 << 20;

/// Raises a default `MetaspaceSize` by [`AGENT_METADATA`], up to `MaxMetaspaceSize`. Agent_OnLoad only.
/// Returns the new value, or None when the flag is the user's or cannot be found.
pub fn make_room() -> Option<usize> {
    let size = vm_flags::size_flag("MetaspaceSize").filter(|f| f.is_default())?;
    let old = size.get();
    // A value outside what HotSpot would choose by default means the table is not what it seems.
    if !(1 << 20..=1 << 30).contains(&old) {
        return None;
    }
    let max = vm_flags::size_flag("MaxMetaspaceSize")?.get();
    let new = (old + AGENT_METADATA).min(max);
    (new > old).then(|| {
        size.set(new);
        new
    })
}
