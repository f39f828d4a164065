//! The one OBJECT_FREE callback, shared by the users of object tags. Tags with `TRACE_TAG_BIT` (bit 62)
//! belong to the XML trace; the others to the live-object tracker (live.rs). Runs on the service thread
//! after a GC, or on a thread inside a JVMTI heap function: no JNI, no JVMTI, no lock, no allocation.
//! Both consumers only touch atomics (live.rs's fixed counters, the trace's lock-free ring).

use std::sync::atomic::{AtomicBool, Ordering};

use jni_sys::jlong;

use crate::jvmti::{event, Jvmti, JvmtiError, ERROR_NONE};
use crate::xml_trace::TRACE_TAG_BIT;

/// Whether OBJECT_FREE may be posted: set before the event is enabled, cleared after it is disabled.
static ENABLED: AtomicBool = AtomicBool::new(false);

/// Enables or disables OBJECT_FREE; every user of the event goes through here, so that [`may_post`] is true.
pub fn set_enabled(jvmti: Jvmti, on: bool) -> JvmtiError {
    if on {
        ENABLED.store(true, Ordering::SeqCst);
    }
    let e = jvmti.set_event(event::OBJECT_FREE, on);
    if !on && e == ERROR_NONE {
        ENABLED.store(false, Ordering::SeqCst);
    }
    e
}

/// Whether the VM may be posting OBJECT_FREE events, which makes every safepoint the agent requests from an
/// event callback a way to hang the VM's exit. HotSpot 17 and 25 (JDK-8256811's design): the service thread
/// posts a batch of ObjectFree events with a "posting" flag set and, when the batch ends, stops at any
/// pending safepoint before clearing it; the thread that exits waits for that flag, before VM_DEATH, in the
/// VM state that a safepoint waits for. A safepoint requested in between (GetObjectMonitorUsage from a
/// contended-enter callback, in a burst as threads block on Shutdown's locks) never starts, and the exit
/// never ends. Found with `tests/faults.rs` `exit_from_eight_threads_at_once`, 3 hangs in 36 runs with a
/// small heap. A GC's own safepoint can still meet the same window: that part is the JVM's.
pub fn may_post() -> bool {
    ENABLED.load(Ordering::SeqCst)
}

/// JVMTI ObjectFree: the tag of a freed object.
pub fn object_free(tag: jlong) {
    if tag & TRACE_TAG_BIT != 0 {
        crate::xml_trace::object_freed(tag);
    } else if let Some(live) = crate::state::agent().and_then(crate::live_switch::tracker) {
        live.freed(tag);
    }
}
