//! The agent's one global: what Agent_OnLoad set up, plus what the callbacks accumulate.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{Mutex, OnceLock};

use instr_rewriter::probes::IdRegistry;
use instr_rules::Rules;
use jni_sys::jobject;

use crate::jvmti::Jvmti;
use crate::stacks::Stacks;

pub struct Agent {
    pub jvmti: Jvmti,
    pub rules: Rules,
    /// Every `live_every`-th allocation of a class is tagged, to count live objects at exit; 0: off.
    pub live_every: u32,
    /// `calls=times`: per-thread call trees and times (method_report.rs); otherwise counts only.
    pub call_times: bool,
    /// `clock=exact`: System.nanoTime at every call event instead of the ticking clock (calls.rs).
    pub exact_clock: bool,
    pub ids: IdRegistry,
    /// True once HeapProxy.engage() has run: classes loaded from then on call the native flavour.
    pub engaged: AtomicBool,
    /// The HeapProxy class (a global reference), once defined.
    pub proxy: Mutex<Option<GlobalRef>>,
    /// The HeapProxyCalls class (a global reference), once defined.
    pub calls_proxy: Mutex<Option<GlobalRef>>,
    /// Instance size per HeapProxy class slot, reported by `classSeen`.
    pub instance_sizes: Mutex<HashMap<i32, i64>>,
    pub stacks: Stacks,
    /// Classes whose rewrite failed, so each is reported once.
    pub failed: Mutex<HashSet<String>>,
    pub gc: GcStats,
}

#[derive(Default)]
pub struct GcStats {
    pub count: AtomicU64,
    pub total_nanos: AtomicU64,
    pub max_nanos: AtomicU64,
    /// Start of the running collection, in nanoseconds since the agent loaded.
    pub started: AtomicU64,
}

/// A JNI global reference, usable from any thread.
#[derive(Clone, Copy)]
pub struct GlobalRef(pub jobject);
// SAFETY: global references are valid on every thread until deleted.
unsafe impl Send for GlobalRef {}

static AGENT: OnceLock<Agent> = OnceLock::new();

pub fn install(agent: Agent) -> &'static Agent {
    let _ = AGENT.set(agent);
    AGENT.get().expect("agent just installed")
}

pub fn agent() -> Option<&'static Agent> {
    AGENT.get()
}

pub fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A panic in another callback must not take every later callback down with it.
    m.lock().unwrap_or_else(|p| p.into_inner())
}
