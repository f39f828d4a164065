//! Per-thread allocation rows at thread start and end. `HeapProxyAllocs` counts every thread into rows of its
//! own (plain adds, no atomics); when a thread ends its rows are folded into the shared totals and its slot is
//! freed, so that a program making thousands of short-lived threads keeps rows only for the living ones.
//!
//! A thread gets the site pages of every site given out so far when it starts (`HeapProxyAllocs.adopt`), and
//! every thread gets the pages of new sites from ClassFileLoadHook before they can run (`reserve`), so that
//! the site probes' slow branch is never taken and C2 compiles it as a trap, not as a call (the same reason
//! as the call rows', calls.rs).
//!
//! JVMTI ThreadEnd runs on the ending thread after the last of its Java code (`Thread.exit`), which is what
//! makes the fold safe without atomics: nothing else writes that thread's rows. The fold itself is Java
//! (`HeapProxy.retireThread`), under the lock the readers hold, so each count is read exactly once.

use std::sync::atomic::{AtomicUsize, Ordering};

use jni_sys::{jclass, jint, jmethodID, jvalue};

use crate::jni::Jni;
use crate::state::agent;

/// `HeapProxy.retireThread` and its class, found at VM_INIT; until then thread ends fold nothing.
#[derive(Default)]
pub struct ThreadRows {
    proxy: AtomicUsize,
    retire: AtomicUsize,
    /// `HeapProxyAllocs` (a global reference) and its `adopt()` and `reserve(int)`: 0 until engaged.
    allocs: AtomicUsize,
    adopt: AtomicUsize,
    reserve: AtomicUsize,
    /// The site ids every thread's pages cover (what `reserve` was last given).
    reserved_sites: AtomicUsize,
}

impl ThreadRows {
    /// Looks the method up (after `HeapProxy.engage`: before it, a call would initialise HeapProxyAllocs
    /// without its settings).
    pub fn resolve(&self, jni: Jni, proxy: jclass) {
        if let Some(m) = jni.static_method(proxy, "retireThread", "()V") {
            self.proxy.store(proxy as usize, Ordering::Relaxed);
            self.retire.store(m as usize, Ordering::Release);
        }
        let Some(allocs) = jni.find_class("java/lang/HeapProxyAllocs") else {
            return;
        };
        let global = jni.new_global(allocs);
        jni.delete_local(allocs);
        self.allocs.store(global as usize, Ordering::Relaxed);
        for (cell, name, signature) in [
            (&self.adopt, "adopt", "()V"),
            (&self.reserve, "reserve", "(I)V"),
        ] {
            if let Some(m) = jni.static_method(global, name, signature) {
                cell.store(m as usize, Ordering::Release);
            }
        }
    }
}

/// ThreadStart, on the new thread: its slot and the site pages given out so far, before its first probe.
pub fn adopt_current_thread(jni: Jni) {
    let Some(a) = agent() else { return };
    let rows = &a.thread_rows;
    let adopt = rows.adopt.load(Ordering::Acquire);
    if adopt == 0 || !a.engaged.load(Ordering::Acquire) {
        return;
    }
    let allocs = rows.allocs.load(Ordering::Relaxed) as jclass;
    jni.keeping_pending_exception(|| jni.call_static_void(allocs, adopt as jmethodID, &[]));
}

/// Gives every thread the pages of the site ids given out so far, if they do not have them yet. Called from
/// ClassFileLoadHook once a class is rewritten, before any of its sites can run, and once at engage.
pub fn cover_site_ids(jni: Jni) {
    let Some(a) = agent() else { return };
    let rows = &a.thread_rows;
    let reserve = rows.reserve.load(Ordering::Acquire);
    let wanted = a.ids.site_count();
    // Not once the exit report has begun (engaged goes false): it holds the lock reserve() takes.
    if reserve == 0
        || wanted <= rows.reserved_sites.load(Ordering::Relaxed)
        || !a.engaged.load(Ordering::Acquire)
    {
        return;
    }
    let allocs = rows.allocs.load(Ordering::Relaxed) as jclass;
    let arg = jvalue {
        i: jint::try_from(wanted).unwrap_or(jint::MAX),
    };
    if jni.keeping_pending_exception(|| jni.call_static_void(allocs, reserve as jmethodID, &[arg]))
    {
        rows.reserved_sites.fetch_max(wanted, Ordering::Relaxed);
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
