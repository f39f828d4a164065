//! The agent's one global: what Agent_OnLoad set up, plus what the callbacks accumulate.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize};
use std::sync::{Mutex, OnceLock};

use instr_rewriter::probes::IdRegistry;
use instr_rules::Rules;

use crate::jvmti::Jvmti;
use crate::stacks::Stacks;

pub struct Agent {
    pub jvmti: Jvmti,
    pub java_vm: JavaVm,
    pub rules: Rules,
    /// Every `live_every`-th allocation of a class is tagged, to count live objects at exit; 0: off.
    pub live_every: u32,
    /// Live objects per site or class (dense index), when live tracking is on.
    pub live: Option<crate::live::Live>,
    /// `stacks=SIZE`: the heap sampler's stacks, which split each site's exact count (depth >= 2).
    pub sampled_stacks: Option<crate::sampled_stacks::SampledStacks>,
    /// `calls=times`: per-thread call trees and times (method_report.rs); otherwise counts only.
    pub call_times: bool,
    /// `clock=exact`: System.nanoTime at every call event instead of the ticking clock (calls.rs).
    pub exact_clock: bool,
    /// The shape of the method probes, from `calls=` and `leaves=`.
    pub call_probes: instr_rewriter::probes::CallProbes,
    pub ids: IdRegistry,
    /// True once HeapProxy.engage() has run: classes loaded from then on call the native flavour.
    pub engaged: AtomicBool,
    /// The HeapProxy class (a global reference), once defined.
    pub proxy: Mutex<Option<GlobalRef>>,
    /// The HeapProxyCalls class (a global reference), once defined.
    pub calls_proxy: Mutex<Option<GlobalRef>>,
    /// Name and instance size per dense class index (HeapProxyAllocs), given by `classIndex`.
    pub class_index: Mutex<crate::class_index::ClassIndex>,
    pub stacks: Stacks,
    /// jmethodIDs of HeapProxy's Early wrappers of the site probes: a frame a stack walk skips.
    pub early_probes: [AtomicUsize; 2],
    pub vm_allocators: crate::vm_allocations::VmAllocators,
    /// Folds an ending thread's allocation rows into the shared totals.
    pub thread_rows: crate::thread_rows::ThreadRows,
    /// Classes whose rewrite failed, so each is reported once.
    pub failed: Mutex<HashSet<String>>,
    pub gc: GcStats,
    /// `cutoff=`: sites below this share of the total are counted, not listed, in the text report.
    pub text_cutoff: f64,
}

#[derive(Default)]
pub struct GcStats {
    pub count: AtomicU64,
    pub total_nanos: AtomicU64,
    pub max_nanos: AtomicU64,
    /// Start of the running collection, in nanoseconds since the agent loaded.
    pub started: AtomicU64,
}

pub use crate::ffi::java_vm::{GlobalRef, JavaVm};

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
