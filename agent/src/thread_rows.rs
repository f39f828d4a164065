//! Per-thread allocation rows at thread end. `HeapProxyAllocs` counts every thread into rows of its own
//! (plain adds, no atomics); when a thread ends its rows are folded into the shared totals and its slot is
//! freed, so that a program making thousands of short-lived threads keeps rows only for the living ones.
//!
//! JVMTI ThreadEnd runs on the ending thread after the last of its Java code (`Thread.exit`), which is what
//! makes the fold safe without atomics: nothing else writes that thread's rows. The fold itself is Java
//! (`HeapProxy.retireThread`), under the lock the readers hold, so each count is read exactly once.

use std::sync::atomic::{AtomicUsize, Ordering};

use jni_sys::{jclass, jmethodID};

use crate::jni::Jni;
use crate::state::agent;

/// `HeapProxy.retireThread` and its class, found at VM_INIT; until then thread ends fold nothing.
#[derive(Default)]
pub struct ThreadRows {
    proxy: AtomicUsize,
    retire: AtomicUsize,
}

impl ThreadRows {
    /// Looks the method up (after `HeapProxy.engage`: before it, a call would initialise HeapProxyAllocs
    /// without its settings).
    pub fn resolve(&self, jni: Jni, proxy: jclass) {
        if let Some(m) = jni.static_method(proxy, "retireThread", "()V") {
            self.proxy.store(proxy as usize, Ordering::Relaxed);
            self.retire.store(m as usize, Ordering::Release);
        }
    }
}

/// The allocation side of JVMTI ThreadEnd (lib.rs dispatches the event here and to the thread profiler).
pub fn thread_ended(jni: Jni) {
    let Some(a) = agent() else { return };
    // Not engaged: before VM_INIT (no Java may run) or after the exit report started (it reads the rows
    // where they are).
    if !a.engaged.load(Ordering::Acquire) {
        return;
    }
    let rows = &a.thread_rows;
    let retire = rows.retire.load(Ordering::Acquire);
    if retire == 0 {
        return;
    }
    let proxy = rows.proxy.load(Ordering::Relaxed) as jclass;
    // A thread can end with its uncaught exception still pending: set aside, so the slot is freed anyway.
    jni.keeping_pending_exception(|| jni.call_static_void(proxy, retire as jmethodID, &[]));
}
