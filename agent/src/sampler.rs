//! The CPU and wall-clock sampler (`cpu=INTERVAL`, `wall=INTERVAL`, or the rules' `sampling` section):
//! times from samples, beside the exact counts of the probes.
//!
//! How a sample travels:
//! 1. CPU: every thread the agent sees start (ThreadStart, and the main thread at VMInit) gets a timer on
//!    its own CPU clock that sends SIGPROF to that thread every INTERVAL of its CPU time, so a thread that
//!    does not run is not sampled. Wall: an agent thread sends SIGPROF with `tgkill` to every registered
//!    thread, running or not, once per INTERVAL, at most [`WALL_SIGNALS_PER_ROUND`] per round.
//! 2. The handler (ffi/signals.rs) walks the stack with AsyncGetCallTrace, which needs no safepoint,
//!    and [`on_signal`] copies the frames into the preallocated ring (sample_ring.rs), or counts the
//!    failure by AsyncGetCallTrace's error code, or counts the drop when the ring is full.
//! 3. The drain agent thread empties the ring every [`DRAIN_PERIOD`] ([`BUSY_DRAIN_PERIOD`] while the
//!    ring fills faster), resolves each jmethodID once
//!    (class, name, descriptor, line table) and folds the samples into the same records it appends to
//!    the sample log `PREFIX.samples` (profile/src/sample_log.rs), flushed at every drain.
//! 4. At exit (or on demand) the report takes the folded samples as its `samples` section.
//!
//! AsyncGetCallTrace walks only while some agent listens to ClassLoad (it returns ticks_no_class_load
//! otherwise), so that event is enabled too, with an empty handler unless the XML trace has one.
//! It reports only methods that have a jmethodID, and HotSpot makes them lazily: every
//! class's methods get theirs at ClassPrepare (GetClassMethods), and the classes already loaded at
//! VMInit. With `debug-non-safepoints=on` the CompiledMethodLoad event is enabled (and ignored) because
//! HotSpot then records debug information at every instruction of compiled code, not only at calls and
//! safepoint polls, which is what lets the walk name the (inlined) method and line running between two
//! of them. It is off by default: that recording made compiles dearer by a few percent of a
//! compile-heavy program's CPU time, more than everything else the sampler does at 10 ms, and without it
//! a sample in compiled code is credited to the next call or poll of the same compiled method, which
//! moves self time between a method and the methods inlined into it but leaves the frames above alike
//! (bench/README.md, "the sampler's fixed cost").
//!
//! A frame of a class unloaded before the drain resolved it gets JVMTI_ERROR_INVALID_METHODID (HotSpot
//! keeps jmethodIDs valid but cleared) and is counted as an unknown frame, named `(unknown)`.
//!
//! `engine=jvmti` replaces steps 1-2 by GetAllStackTraces from an agent thread: every stack is then taken
//! at a safepoint, the bias the AsyncGetCallTrace engine avoids. It exists to show that bias.

use std::collections::HashMap;
use std::io::Write as _;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::Duration;

use instr_profile::sample_log::{self, Aggregate, FrameType, Kind, LogFrame, Record};
use instr_profile::samples::Samples;
use instr_rewriter::pool_builder::BuildFastHash;
use instr_rules::{Rules, SamplingEngine, SamplingRules};
use jni_sys::{jclass, jmethodID};

use crate::ffi::events::Handlers;
use crate::ffi::signals::{self, RawFrame, Trigger};
use crate::jni::Jni;
use crate::jvmti::{jthread, Capabilities, Jvmti, LineNumberEntry, ERROR_NONE};
use crate::jvmti_ext::{capability, event};
use crate::report::java_name;
use crate::sample_ring::{Sample, SampleRing};
use crate::state::lock;

/// Stacks the ring holds between two drains. At 1 ms on a few cores a drain finds tens to hundreds;
/// the storm test (16 threads at 100 us) overflows it, and the drops are counted.
const RING_SLOTS: usize = 2048;
/// How often the drain thread empties the ring and flushes the log while the ring stays below a
/// quarter full. Each drain has a cost of its own beyond its samples (a JNI frame, a write), which at
/// a 10 ms interval was most of the drain's CPU time; resolving a method within this period of its
/// sample is also what keeps frames of soon unloaded classes named.
const DRAIN_PERIOD: Duration = Duration::from_millis(100);
/// The period after a drain that found the ring more than a quarter full (many cores, a short
/// interval), so that it does not overflow.
const BUSY_DRAIN_PERIOD: Duration = Duration::from_millis(20);
/// The most threads the wall sampler signals per round. With more threads, each round continues where
/// the last stopped, so every thread is still sampled, once per ceil(threads / this) rounds: a program
/// with thousands of threads costs at most this many signals per interval, not thousands.
pub const WALL_SIGNALS_PER_ROUND: usize = 64;
/// Frames the jvmti engine asks for (AsyncGetCallTrace's limit is signals::MAX_FRAMES).
const JVMTI_FRAMES: i32 = 128;
/// Agent threads of the sampler: never sampled themselves.
const OWN_THREAD_PREFIX: &str = "instr-sampler";
/// The name of a frame whose method could not be resolved (class unloaded).
const UNKNOWN: &str = "(unknown)";
/// AsyncGetCallTrace's bci of a native frame.
const NATIVE_BCI: i32 = -3;
/// The jvmti engine's failure code for a thread that was not running (signals.rs has 1: no JNIEnv).
const NOT_RUNNING: i32 = 2;
/// `JVMTI_THREAD_STATE_RUNNABLE`.
const THREAD_RUNNABLE: i32 = 0x4;
/// Failure codes counted: AsyncGetCallTrace's -10..=0, and the agent's 1 and 2.
const CODES: std::ops::RangeInclusive<i32> = -10..=2;

pub struct Sampler {
    jvmti: Jvmti,
    rules: SamplingRules,
    /// `sample-threads=on`: collapsed stacks per thread.
    pub per_thread: bool,
    prefix: String,
    ring: SampleRing,
    /// Walks that failed, by code (index: code - CODES.start), and the rest in the last slot.
    failed: [AtomicU64; 14],
    /// Threads that could not be registered (table full) or whose timer could not be made.
    unregistered: AtomicU64,
    stopping: AtomicBool,
    /// CPU timers by OS thread id (touched at thread start and end and at VM death, never in a signal).
    timers: Mutex<HashMap<i32, usize>>,
    drain: Mutex<Drain>,
}

/// What the drain thread keeps: the fold of every record, the log, and the resolution caches.
struct Drain {
    aggregate: Aggregate,
    log: Option<std::fs::File>,
    log_failed: bool,
    pending: Vec<u8>,
    methods: HashMap<usize, Resolved, BuildFastHash>,
    next_method: u32,
    /// OS thread id -> the log's thread number (a new one for each thread start: ids are reused).
    threads: HashMap<i32, u32>,
    threads_by_name: HashMap<String, u32>,
    next_thread: u32,
    stacks: HashMap<Vec<LogFrame>, u32, BuildFastHash>,
    /// The stack being built, reused from sample to sample.
    stack: Vec<LogFrame>,
    batch: HashMap<(Kind, u32, u32), u32, BuildFastHash>,
    unknown_frames: u64,
    /// The loss counters last written: an unchanged record is not written again.
    counters: Option<LossCounters>,
}

/// Dropped samples, unknown frames, failed walks by code: what a Counters record holds.
type LossCounters = (u64, u64, Vec<(i32, u64)>);

struct Resolved {
    id: u32,
    /// Sorted by start_location.
    lines: Vec<LineNumberEntry>,
    /// The method could not be named (its class was unloaded).
    unknown: bool,
}

static SAMPLER: OnceLock<Sampler> = OnceLock::new();

/// The handlers the sampler wraps (lib.rs's and the thread profiler's), called first or after its own.
#[derive(Default)]
struct Chain {
    thread_start: Option<fn(Jni, jthread)>,
    thread_end: Option<fn(Jni, jthread)>,
    vm_init: Option<fn(Jni, jthread)>,
    vm_death: Option<fn(Jni)>,
}

static CHAIN: OnceLock<Chain> = OnceLock::new();

pub fn sampler() -> Option<&'static Sampler> {
    SAMPLER.get()
}

/// Applies the inline options `cpu=`, `wall=` and `engine=` over the rules' `sampling` section.
pub fn apply_options(rules: &mut Rules, options: &[(&str, &str)]) -> Result<(), String> {
    if options.is_empty() {
        return Ok(());
    }
    let mut s = *rules.sampling();
    for &(key, value) in options {
        match key {
            "cpu" => {
                s.cpu_ns =
                    instr_rules::parse_interval(value).map_err(|e| format!("cpu={value}: {e}"))?
            }
            "wall" => {
                s.wall_ns =
                    instr_rules::parse_interval(value).map_err(|e| format!("wall={value}: {e}"))?
            }
            "engine" => {
                s.engine =
                    SamplingEngine::parse(value).map_err(|e| format!("engine={value}: {e}"))?
            }
            "debug-non-safepoints" => {
                s.debug_non_safepoints = match value {
                    "on" => true,
                    "off" => false,
                    _ => return Err(format!("debug-non-safepoints={value}: expected on or off")),
                }
            }
            _ => unreachable!("options.rs passes only these keys"),
        }
    }
    if !s.enabled() {
        let key = options[0].0;
        return Err(format!(
            "{key}= says how to sample; give cpu=INTERVAL or wall=INTERVAL too"
        ));
    }
    rules.set_sampling(s);
    Ok(())
}

/// Whether the sampler listens to CompiledMethodLoad: only for its effect on HotSpot, which records
/// debug information at every instruction of compiled code while an agent does (unless the user set
/// -XX:DebugNonSafepoints), so that AsyncGetCallTrace names the method and line a sample really hit
/// in compiled code instead of those of the next call or safepoint poll. The events themselves carry
/// nothing the sampler needs. GetAllStackTraces stops threads at safepoints, where that information
/// exists anyway.
fn wants_compiled_method_load(s: &SamplingRules) -> bool {
    s.enabled() && s.engine == SamplingEngine::Agct && s.debug_non_safepoints
}

/// Adds what sampling needs to `caps`: line numbers (asked for anyway) and, with
/// `debug-non-safepoints=on`, CompiledMethodLoad.
pub fn add_capabilities(
    rules: &Rules,
    potential: &Capabilities,
    caps: Capabilities,
) -> Result<Capabilities, String> {
    if !wants_compiled_method_load(rules.sampling()) {
        return Ok(caps);
    }
    let bit = capability::GENERATE_COMPILED_METHOD_LOAD_EVENTS;
    if !potential.has(bit) {
        return Err(format!(
            "this VM does not offer the JVMTI capability {} (needed by the sampler)",
            capability::name(bit)
        ));
    }
    Ok(caps.with(bit))
}

/// Sets the sampler up (after AddCapabilities) and wraps the handlers it shares; nothing when sampling
/// is off. Err: one line (no AsyncGetCallTrace, no signal handler).
pub fn install(
    jvmti: Jvmti,
    rules: &Rules,
    per_thread: bool,
    handlers: &mut Handlers,
) -> Result<(), String> {
    let s = *rules.sampling();
    if !s.enabled() {
        return Ok(());
    }
    let prefix = rules.output_path(std::process::id());
    let _ = SAMPLER.set(Sampler {
        jvmti,
        rules: s,
        per_thread,
        prefix,
        ring: SampleRing::new(RING_SLOTS),
        failed: Default::default(),
        unregistered: AtomicU64::new(0),
        stopping: AtomicBool::new(false),
        timers: Mutex::new(HashMap::new()),
        drain: Mutex::new(Drain {
            aggregate: Aggregate::default(),
            log: None,
            log_failed: false,
            pending: Vec::new(),
            methods: HashMap::default(),
            next_method: 1,
            threads: HashMap::new(),
            threads_by_name: HashMap::new(),
            next_thread: 1,
            stacks: HashMap::default(),
            stack: Vec::with_capacity(signals::MAX_FRAMES),
            batch: HashMap::default(),
            unknown_frames: 0,
            counters: None,
        }),
    });
    // The log first: threads the VM starts before VMInit are recorded into it too.
    if let Some(sampler) = SAMPLER.get() {
        open_log(sampler);
    }
    if s.engine == SamplingEngine::Agct {
        signals::install(on_signal)?;
    }
    wrap_handlers(handlers);
    Ok(())
}

/// Puts the sampler's handlers in front of those it shares. With sampling off at load, `start cpu`
/// (below) may start it later, and JVMTI takes one callback table: each wrapper only passes the event
/// on while no sampler exists, and the sampler's own events stay disabled until then.
pub fn wrap_handlers(handlers: &mut Handlers) {
    let _ = CHAIN.set(Chain {
        thread_start: handlers.thread_start,
        thread_end: handlers.thread_end,
        vm_init: handlers.vm_init,
        vm_death: handlers.vm_death,
    });
    handlers.thread_start = Some(thread_start);
    handlers.thread_end = Some(thread_end);
    handlers.vm_init = Some(vm_init);
    handlers.vm_death = Some(vm_death);
    // AsyncGetCallTrace refuses to walk (ticks_no_class_load) unless some agent listens to ClassLoad.
    handlers.class_load = handlers.class_load.or(Some(class_load));
    handlers.class_prepare = Some(class_prepare);
    // Set always (one callback table for the VM's life); the event is enabled only with
    // `debug-non-safepoints=on` (`enable_events`, `own_events`).
    handlers.compiled_method_load = Some(compiled_method_load);
}

/// Enables the sampler's events (after SetEventCallbacks).
pub fn enable_events(jvmti: Jvmti) -> Result<(), String> {
    let Some(s) = SAMPLER.get() else {
        return Ok(());
    };
    let precise = wants_compiled_method_load(&s.rules).then_some(event::COMPILED_METHOD_LOAD);
    for e in [
        event::VM_INIT,
        event::VM_DEATH,
        event::THREAD_START,
        event::THREAD_END,
        event::CLASS_LOAD,
        event::CLASS_PREPARE,
    ]
    .into_iter()
    .chain(precise)
    {
        if jvmti.set_event(e, true) != ERROR_NONE {
            return Err(format!(
                "cannot enable JVMTI event {e} (needed by the sampler)"
            ));
        }
    }
    Ok(())
}

/// The signal handler's half: async-signal-safe (atomics and the ring only).
fn on_signal(trigger: Trigger, tid: i32, weight: u32, walk: Result<&[RawFrame], i32>) {
    let Some(s) = SAMPLER.get() else { return };
    match walk {
        Ok(frames) => {
            s.ring.push(trigger, tid, weight, frames);
        }
        Err(code) => s.count_failure(code),
    }
}

impl Sampler {
    fn count_failure(&self, code: i32) {
        let i = if CODES.contains(&code) {
            (code - CODES.start()) as usize
        } else {
            self.failed.len() - 1
        };
        self.failed[i].fetch_add(1, Ordering::Relaxed);
    }

    fn failures(&self) -> Vec<(i32, u64)> {
        let mut out: Vec<(i32, u64)> = CODES
            .map(|code| {
                let i = (code - CODES.start()) as usize;
                (code, self.failed[i].load(Ordering::Relaxed))
            })
            .collect();
        out.push((
            i32::MIN,
            self.failed[self.failed.len() - 1].load(Ordering::Relaxed),
        ));
        out.retain(|&(_, n)| n > 0);
        out
    }
}

fn own_thread(name: &str) -> bool {
    name.starts_with(OWN_THREAD_PREFIX)
}

/// Registers the calling thread for AsyncGetCallTrace and arms its CPU timer.
fn start_sampling_current(s: &Sampler, jni: Jni, thread: jthread) {
    let name = s
        .jvmti
        .thread_info(thread)
        .map(|i| {
            jni.delete_local(i.group);
            i.name
        })
        // GetThreadInfo is live-phase only: threads the VM starts before VMInit have no name here.
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| "(no name)".to_string());
    if own_thread(&name) {
        return;
    }
    let tid = signals::current_tid();
    {
        let mut d = lock(&s.drain);
        let id = d.next_thread;
        d.next_thread += 1;
        d.threads.insert(tid, id);
        d.emit(Record::Thread { id, name });
    }
    if s.rules.engine != SamplingEngine::Agct || s.stopping.load(Ordering::Acquire) {
        return;
    }
    // The JNIEnv is in the table before the first signal can come.
    if !signals::register_current_thread(jni) {
        s.unregistered.fetch_add(1, Ordering::Relaxed);
        return;
    }
    if s.rules.cpu_ns > 0 {
        match signals::arm_cpu_timer(s.rules.cpu_ns) {
            Ok(timer) => {
                if let Some(old) = lock(&s.timers).insert(tid, timer) {
                    signals::disarm_cpu_timer(old);
                }
            }
            Err(_) => {
                s.unregistered.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

fn thread_start(jni: Jni, thread: jthread) {
    if let Some(h) = CHAIN.get().and_then(|c| c.thread_start) {
        h(jni, thread);
    }
    if let Some(s) = sampler() {
        start_sampling_current(s, jni, thread);
    }
}

fn thread_end(jni: Jni, thread: jthread) {
    if let Some(s) = sampler() {
        if let Some(timer) = lock(&s.timers).remove(&signals::current_tid()) {
            signals::disarm_cpu_timer(timer);
        }
        signals::unregister_current_thread();
    }
    if let Some(h) = CHAIN.get().and_then(|c| c.thread_end) {
        h(jni, thread);
    }
}

fn class_prepare(_jni: Jni, _thread: jthread, class: jclass) {
    if let Some(s) = sampler() {
        // Asking for the methods is what creates their jmethodIDs; the list itself is not needed.
        let _ = s.jvmti.class_methods(class);
    }
}

fn compiled_method_load() {}

fn class_load(_jni: Jni, _thread: jthread, _class: jclass) {}

fn vm_init(jni: Jni, thread: jthread) {
    if let Some(h) = CHAIN.get().and_then(|c| c.vm_init) {
        h(jni, thread);
    }
    let Some(s) = sampler() else { return };
    for class in s.jvmti.loaded_classes() {
        let _ = s.jvmti.class_methods(class);
        jni.delete_local(class);
    }
    start_sampling_current(s, jni, thread);
    start_thread(s, jni, "instr-sampler-drain", drain_main);
    match s.rules.engine {
        SamplingEngine::Agct if s.rules.wall_ns > 0 => {
            start_thread(s, jni, "instr-sampler-wall", wall_main)
        }
        SamplingEngine::Agct => {}
        SamplingEngine::Jvmti => start_thread(s, jni, "instr-sampler-jvmti", jvmti_main),
    }
}

fn start_thread(s: &Sampler, jni: Jni, name: &str, body: fn(Jni)) {
    let Some(thread) = crate::threads::new_agent_thread(jni, name) else {
        eprintln!("instr: cannot create the {name} thread; no samples");
        return;
    };
    if crate::ffi::events::run_agent_thread(s.jvmti, thread, body, 10) != ERROR_NONE {
        eprintln!("instr: cannot start the {name} thread; no samples");
    }
    jni.delete_local(thread);
}

fn open_log(s: &Sampler) {
    let path = format!("{}.samples", s.prefix);
    let mut d = lock(&s.drain);
    match std::fs::File::create(&path) {
        Ok(f) => {
            d.log = Some(f);
            d.pending = sample_log::header();
        }
        Err(e) => {
            eprintln!("instr: cannot write the sample log {path}: {e}; the reports at exit still have the samples");
            d.log_failed = true;
        }
    }
    let (cpu_interval_ns, wall_interval_ns) = match s.rules.engine {
        SamplingEngine::Agct => (s.rules.cpu_ns, s.rules.wall_ns),
        SamplingEngine::Jvmti => (
            s.rules.cpu_ns,
            if s.rules.wall_ns > 0 {
                jvmti_tick(&s.rules).as_nanos() as u64
            } else {
                0
            },
        ),
    };
    d.emit(Record::Start(sample_log::Start {
        pid: std::process::id(),
        engine: s.rules.engine.as_str().into(),
        cpu_interval_ns,
        wall_interval_ns,
    }));
    d.flush();
}

fn vm_death(jni: Jni) {
    if let Some(s) = sampler() {
        s.stopping.store(true, Ordering::Release);
        wake_drain_and_wait();
        signals::stop();
        for (_, timer) in lock(&s.timers).drain() {
            signals::disarm_cpu_timer(timer);
        }
        drain_once(s, jni);
    }
    if let Some(h) = CHAIN.get().and_then(|c| c.vm_death) {
        h(jni);
    }
}

fn drain_main(jni: Jni) {
    let Some(s) = sampler() else { return };
    DRAINING.store(true, Ordering::Release);
    let mut period = DRAIN_PERIOD;
    loop {
        {
            let asleep = lock(&WAKE_LOCK);
            if !s.stopping.load(Ordering::Acquire) {
                let _ = WAKE.wait_timeout(asleep, period);
            }
        }
        // Whoever stops the sampler drains what is left itself (vm_death, stop_at_run_time).
        if s.stopping.load(Ordering::Acquire) {
            break;
        }
        let drained = drain_once(s, jni);
        period = if drained * 4 > RING_SLOTS {
            BUSY_DRAIN_PERIOD
        } else {
            DRAIN_PERIOD
        };
    }
    DRAINING.store(false, Ordering::Release);
}

/// Empties the ring into the fold and the log, and flushes the log; the number of samples drained.
fn drain_once(s: &Sampler, jni: Jni) -> usize {
    if !jni.push_frame(64) {
        return 0;
    }
    let drained;
    {
        let mut d = lock(&s.drain);
        let d = &mut *d;
        drained = s.ring.drain(|sample: &Sample| {
            let kind = match sample.trigger {
                Trigger::Cpu => Kind::Cpu,
                Trigger::Wall => Kind::Wall,
            };
            let thread = d.threads.get(&sample.tid).copied().unwrap_or(0);
            d.add(s, jni, kind, thread, sample.weight, &sample.frames);
        });
        d.end_batch(s);
    }
    jni.pop_frame();
    drained
}

impl Drain {
    fn emit(&mut self, r: Record) {
        self.aggregate.apply(&r);
        if self.log.is_some() {
            sample_log::encode(&r, &mut self.pending);
        }
    }

    fn flush(&mut self) {
        if let Some(f) = &mut self.log {
            if !self.pending.is_empty() && f.write_all(&self.pending).is_err() && !self.log_failed {
                eprintln!("instr: cannot append to the sample log; the reports at exit still have the samples");
                self.log_failed = true;
                self.log = None;
            }
        }
        self.pending.clear();
    }

    fn method(&mut self, s: &Sampler, jni: Jni, method: usize) -> &Resolved {
        if !self.methods.contains_key(&method) {
            let id = self.next_method;
            self.next_method += 1;
            let m = method as jmethodID;
            let names = s.jvmti.method_name(m);
            let class = s.jvmti.method_declaring_class(m).map(|c| {
                let name = s.jvmti.class_signature(c).map(|sig| java_name(&sig));
                jni.delete_local(c);
                name
            });
            let (class, (name, descriptor), lines, unknown) = match (class.flatten(), names) {
                (Some(class), Some(names)) => (class, names, s.jvmti.line_number_table(m), false),
                // Class unloaded (a cleared jmethodID): named, never asked about again.
                _ => (
                    UNKNOWN.to_string(),
                    (UNKNOWN.to_string(), String::new()),
                    Vec::new(),
                    true,
                ),
            };
            self.emit(Record::Method(sample_log::LogMethod {
                id,
                class,
                method: name,
                descriptor,
            }));
            let mut lines = lines;
            lines.sort_unstable_by_key(|e| e.start_location);
            self.methods.insert(method, Resolved { id, lines, unknown });
        }
        &self.methods[&method]
    }

    /// One sample: frames (jmethodID, bci), the leaf first.
    fn add(
        &mut self,
        s: &Sampler,
        jni: Jni,
        kind: Kind,
        thread: u32,
        weight: u32,
        frames: &[(usize, i32)],
    ) {
        let mut stack = std::mem::take(&mut self.stack);
        stack.clear();
        for &(method, bci) in frames {
            let r = self.method(s, jni, method);
            let (id, line, unknown) = (r.id, line_of(&r.lines, bci), r.unknown);
            if unknown {
                self.unknown_frames += 1;
            }
            stack.push(LogFrame {
                method: id,
                line,
                frame_type: if bci == NATIVE_BCI {
                    FrameType::Native
                } else {
                    FrameType::Java
                },
            });
        }
        let next = self.stacks.len() as u32 + 1;
        let stack_id = match self.stacks.get(stack.as_slice()) {
            Some(&id) => id,
            None => {
                self.stacks.insert(stack.clone(), next);
                self.emit(Record::Stack {
                    id: next,
                    frames: stack.clone(),
                });
                next
            }
        };
        self.stack = stack;
        *self.batch.entry((kind, thread, stack_id)).or_default() += weight;
    }

    fn end_batch(&mut self, s: &Sampler) {
        let mut batch: Vec<_> = self.batch.drain().collect();
        batch.sort_unstable_by_key(|&((k, t, st), _)| (k as u8, t, st));
        for ((kind, thread, stack), count) in batch {
            self.emit(Record::Samples {
                kind,
                thread,
                stack,
                count,
            });
        }
        let counters: LossCounters = (s.ring.dropped(), self.unknown_frames, s.failures());
        if self.counters.as_ref() != Some(&counters) {
            self.emit(Record::Counters {
                dropped: counters.0,
                unknown_frames: counters.1,
                failed: counters.2.clone(),
            });
            self.counters = Some(counters);
        }
        self.flush();
    }
}

/// The source line of `bci` (-1 when unknown or native), in `lines` sorted by start_location.
fn line_of(lines: &[LineNumberEntry], bci: i32) -> i32 {
    if bci < 0 {
        return -1;
    }
    match lines.partition_point(|e| e.start_location <= i64::from(bci)) {
        0 => -1,
        i => lines[i - 1].line_number,
    }
}

fn wall_main(_jni: Jni) {
    let Some(s) = sampler() else { return };
    let period = Duration::from_nanos(s.rules.wall_ns);
    let mut tids = Vec::new();
    let mut next = 0usize;
    while !s.stopping.load(Ordering::Acquire) {
        std::thread::sleep(period);
        tids.clear();
        signals::registered_threads(&mut tids);
        if tids.is_empty() {
            continue;
        }
        tids.sort_unstable();
        let n = tids.len().min(WALL_SIGNALS_PER_ROUND);
        for k in 0..n {
            signals::signal_thread(tids[(next + k) % tids.len()]);
        }
        next = (next + n) % tids.len();
    }
}

/// The jvmti engine's period: the CPU interval if set, else the wall one.
fn jvmti_tick(r: &SamplingRules) -> Duration {
    Duration::from_nanos(if r.cpu_ns > 0 { r.cpu_ns } else { r.wall_ns })
}

fn jvmti_main(jni: Jni) {
    let Some(s) = sampler() else { return };
    let tick = jvmti_tick(&s.rules);
    while !s.stopping.load(Ordering::Acquire) {
        std::thread::sleep(tick);
        if !jni.push_frame(256) {
            continue;
        }
        let traces = s.jvmti.all_stack_traces_and_states(JVMTI_FRAMES);
        let mut d = lock(&s.drain);
        for (thread, state, frames) in traces {
            let name = s
                .jvmti
                .thread_info(thread)
                .map(|i| i.name)
                .unwrap_or_default();
            if own_thread(&name) || frames.is_empty() {
                continue;
            }
            let id = match d.threads_by_name.get(&name) {
                Some(&id) => id,
                None => {
                    let id = d.next_thread;
                    d.next_thread += 1;
                    d.threads_by_name.insert(name.clone(), id);
                    d.emit(Record::Thread { id, name });
                    id
                }
            };
            let raw: Vec<(usize, i32)> = frames
                .iter()
                .map(|f| (f.method as usize, f.location as i32))
                .collect();
            if s.rules.cpu_ns > 0 {
                if state & THREAD_RUNNABLE != 0 {
                    d.add(s, jni, Kind::Cpu, id, 1, &raw);
                } else {
                    s.count_failure(NOT_RUNNING);
                }
            }
            if s.rules.wall_ns > 0 {
                d.add(s, jni, Kind::Wall, id, 1, &raw);
            }
        }
        d.end_batch(s);
        drop(d);
        jni.pop_frame();
    }
}

/// The report's `samples` section as it is now: the ring is drained first, so that an on-demand report
/// has every sample taken until it was asked for, not only those of the last drain period.
pub fn section(jni: Jni) -> Option<Samples> {
    let s = sampler()?;
    drain_once(s, jni);
    let d = lock(&s.drain);
    Some(d.aggregate.samples())
}

/// `PREFIX.cpu.collapsed` and `PREFIX.wall.collapsed` of a profile with samples.
pub fn collapsed_files(p: &instr_profile::Profile, prefix: &str) -> Vec<(String, Vec<u8>)> {
    let per_thread = sampler().is_some_and(|s| s.per_thread);
    let Some(samples) = &p.samples else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (kind, on) in [
        (instr_profile::samples::CPU, samples.cpu_interval_ns > 0),
        (instr_profile::samples::WALL, samples.wall_interval_ns > 0),
    ] {
        if on {
            out.push((
                format!("{prefix}.{kind}.collapsed"),
                instr_profile::samples::collapsed(p, kind, per_thread).into_bytes(),
            ));
        }
    }
    out
}

// Started and stopped while the program runs (`start cpu`, `stop cpu`; cpu_switch.rs has the rest).

/// Whether a drain thread runs (a stopped sampler's drain thread ends as soon as it is woken).
static DRAINING: AtomicBool = AtomicBool::new(false);

/// Wakes the drain thread before its period is over. An agent thread asleep in native code holds up the
/// VM's exit (HotSpot waits up to 300 ms for threads in native code), so at VM death the thread is woken
/// and has left before the VM exits.
static WAKE: Condvar = Condvar::new();
static WAKE_LOCK: Mutex<()> = Mutex::new(());

/// After `stopping` is set: wakes the drain thread and waits (a bounded while) until it has ended.
fn wake_drain_and_wait() {
    drop(lock(&WAKE_LOCK));
    WAKE.notify_all();
    for _ in 0..200 {
        if !DRAINING.load(Ordering::Acquire) {
            return;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// The events the sampler enables, beside the thread events others may share: CompiledMethodLoad only
/// with `debug-non-safepoints=on`.
fn own_events(s: &Sampler) -> Vec<u32> {
    let mut events = vec![event::CLASS_LOAD, event::CLASS_PREPARE];
    if wants_compiled_method_load(&s.rules) {
        events.push(event::COMPILED_METHOD_LOAD);
    }
    events
}

/// Whether the sampler runs now (made at load with `cpu=`/`wall=`, or by `start cpu`, and not stopped).
pub fn running() -> bool {
    sampler().is_some_and(|s| !s.stopping.load(Ordering::Acquire))
}

/// The CPU interval the sampler was made with, if it was.
pub fn cpu_interval_ns() -> Option<u64> {
    sampler().map(|s| s.rules.cpu_ns)
}

/// `start cpu`: the CPU sampler from now, every `cpu_ns` of each thread's CPU time. `running` are the
/// threads alive now (OS id, name), which get their timers here; threads started later get theirs at
/// ThreadStart. The first start makes the sampler and its log; a later one resumes it, at the same
/// interval (the log has one).
pub fn start_at_run_time(
    jvmti: Jvmti,
    rules: &Rules,
    cpu_ns: u64,
    jni: Jni,
    running: &[(i32, String)],
) -> Result<usize, String> {
    if let Some(s) = sampler() {
        if s.rules.cpu_ns != cpu_ns || s.rules.engine != SamplingEngine::Agct {
            return Err(format!(
                "the sampler ran at cpu={}us before; its interval is fixed for the life of the VM",
                s.rules.cpu_ns / 1000
            ));
        }
        // The last drain thread is gone before this one starts.
        for _ in 0..100 {
            if !DRAINING.load(Ordering::Acquire) {
                break;
            }
            std::thread::sleep(DRAIN_PERIOD / 4);
        }
        s.stopping.store(false, Ordering::Release);
    } else {
        let mut with = rules.clone();
        with.set_sampling(SamplingRules {
            cpu_ns,
            wall_ns: 0,
            engine: SamplingEngine::Agct,
            // A run-time start samples with safepoint debug information only: turning
            // CompiledMethodLoad on now would not reach the code already compiled.
            debug_non_safepoints: false,
        });
        install(jvmti, &with, false, &mut Handlers::default())?;
    }
    let s = sampler().ok_or("the sampler could not be set up")?;
    signals::install(on_signal)?;
    // AsyncGetCallTrace names only methods that have a jmethodID.
    for class in s.jvmti.loaded_classes() {
        let _ = s.jvmti.class_methods(class);
        jni.delete_local(class);
    }
    for e in own_events(s)
        .into_iter()
        .chain([event::THREAD_START, event::THREAD_END])
    {
        if jvmti.set_event(e, true) != ERROR_NONE {
            return Err(format!(
                "cannot enable JVMTI event {e} (needed by the sampler)"
            ));
        }
    }
    let mut armed = 0;
    for (tid, name) in running {
        if own_thread(name) || *tid == signals::current_tid() {
            continue;
        }
        // Err: the thread ended meanwhile.
        if let Ok(timer) = signals::arm_cpu_timer_of(*tid, cpu_ns) {
            let mut d = lock(&s.drain);
            let id = d.next_thread;
            d.next_thread += 1;
            d.threads.insert(*tid, id);
            d.emit(Record::Thread {
                id,
                name: name.clone(),
            });
            drop(d);
            if let Some(old) = lock(&s.timers).insert(*tid, timer) {
                signals::disarm_cpu_timer(old);
            }
            armed += 1;
        }
    }
    start_thread(s, jni, "instr-sampler-drain", drain_main);
    Ok(armed)
}

/// `stop cpu`: no timer, no signal, no event of the sampler's own left; `thread_events` says whether
/// ThreadStart and ThreadEnd stay on for the rest of the agent. What was sampled stays in the reports.
pub fn stop_at_run_time(jni: Jni, thread_events: (bool, bool)) -> usize {
    let Some(s) = sampler() else { return 0 };
    s.stopping.store(true, Ordering::Release);
    wake_drain_and_wait();
    signals::stop();
    let timers: Vec<usize> = lock(&s.timers).drain().map(|(_, t)| t).collect();
    for &timer in &timers {
        signals::disarm_cpu_timer(timer);
    }
    let mut off = own_events(s);
    if !thread_events.0 {
        off.push(event::THREAD_START);
    }
    if !thread_events.1 {
        off.push(event::THREAD_END);
    }
    for e in off {
        // ClassLoad also feeds the XML trace, whose handler stays; its event is on then for the trace.
        if e == event::CLASS_LOAD
            && crate::threads::profiler().is_some_and(|p| p.rules.trace.is_some())
        {
            continue;
        }
        s.jvmti.set_event(e, false);
    }
    drain_once(s, jni);
    timers.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_of_takes_the_last_entry_at_or_before_the_bci() {
        let e = |start_location, line_number| LineNumberEntry {
            start_location,
            line_number,
        };
        let mut lines = vec![e(10, 7), e(0, 5), e(4, 6)];
        lines.sort_unstable_by_key(|e| e.start_location);
        assert_eq!(
            [0, 3, 4, 9, 10, 99, NATIVE_BCI].map(|b| line_of(&lines, b)),
            [5, 5, 6, 6, 7, 7, -1]
        );
        assert_eq!(line_of(&[e(2, 9)], 1), -1);
    }
}
