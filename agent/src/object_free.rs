//! The one OBJECT_FREE callback, shared by the users of object tags. Tags with `TRACE_TAG_BIT` (bit 62)
//! belong to the XML trace; the others to the live-object tracker (live.rs). Runs on the service thread
//! after a GC, or on a thread inside a JVMTI heap function: no JNI, no JVMTI, no lock, no allocation.
//! Both consumers only touch atomics (live.rs's fixed counters, the trace's lock-free ring).

use jni_sys::jlong;

use crate::xml_trace::TRACE_TAG_BIT;

/// JVMTI ObjectFree: the tag of a freed object.
pub fn object_free(tag: jlong) {
    if tag & TRACE_TAG_BIT != 0 {
        crate::xml_trace::object_freed(tag);
    } else if let Some(live) = crate::state::agent().and_then(crate::live_switch::tracker) {
        live.freed(tag);
    }
}
