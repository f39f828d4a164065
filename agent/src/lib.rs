//! `libinstr.so`, the JVMTI agent: rewrites classes as they load so that every allocation (and, when the
//! rules ask, every call) reports to `java.lang.HeapProxy`, and writes exact reports at VM exit.
//!
//! Life cycle:
//! * `Agent_OnLoad`: options and rules, capabilities, callbacks. By default no class is touched while the
//!   VM starts, so that it keeps class-data sharing (cds.rs); with `early=on` (or `auto`, when the rules
//!   select the JDK's start-up classes), the early class hook, so that `java.lang.Object` itself is
//!   rewritten as it loads.
//! * `early=on`: early VM_START, before any bytecode runs: define `java.lang.HeapProxy` (and its halves
//!   `HeapProxyAllocs`, `HeapProxyCalls` and `HeapProxyLambdas`) in java.base from the bytes embedded at build time.
//! * ClassFileLoadHook (`hook.rs`): the rewriter, with the Early flavour until the agent is engaged.
//! * VM_INIT: by default HeapProxy defined and the loaded classes the rules select retransformed (cds.rs);
//!   then `HeapProxy.engage(...)`; classes loaded from then on call the native flavour.
//! * ThreadEnd: the ending thread's allocation rows join the shared totals (`thread_rows.rs`).
//! * VM_DEATH: read the counters back and write the reports (`report.rs`).
//!
//! Loaded into a running VM instead (`Agent_OnAttach`, attach.rs), or at start-up with `start=off`, the
//! agent does the same late: HeapProxy is defined and engaged at once, with the native flavour, and the
//! probes are added by retransforming the loaded classes (switches.rs). The control socket (control.rs)
//! starts and stops them while the program runs.

pub mod allocating_intrinsics;
pub mod attach;
pub mod calls;
pub mod cds;
pub mod class_index;
pub mod commands;
pub mod compiler_directive;
pub mod control;
pub mod cpu_switch;
pub mod deadlocks;
pub mod elf_symbols;
pub mod event_ring;
pub mod exit_times;
pub mod ffi;
pub mod heap_dump;
pub mod heap_sampling;
pub mod hook;
pub mod hprof;
pub mod lambda_classes;
pub mod live;
pub mod live_switch;
pub mod metaspace;
pub mod method_report;
pub mod monitor_report;
pub mod monitor_switch;
pub mod monitors;
pub mod natives;
pub mod object_free;
pub mod obsolete_code;
pub mod options;
pub mod own_allocation;
pub mod report;
pub mod report_files;
pub mod sample_ring;
pub mod sampled_stacks;
pub mod sampler;
pub mod seq_ring;
pub mod site_order;
pub mod stacks;
pub mod state;
pub mod switches;
pub mod thread_rows;
pub mod threads;
pub mod vm_allocations;
pub mod xml_trace;

use std::sync::atomic::Ordering;
use std::sync::OnceLock;
use std::time::Instant;

use instr_rewriter::probes::CallProbes;
use jni_sys::{jint, jvalue};

/// The rewriter the agent runs in ClassFileLoadHook.
pub use instr_rewriter as rewriter;

// The FFI layer's modules, under the names the rest of the agent has always used.
pub use ffi::{jni, jni_ext, jvmti, jvmti_ext};

use crate::ffi::events::Handlers;
use crate::ffi::java_vm::{GlobalRef, JavaVm};
use crate::jni::Jni;
use crate::jvmti::{capability, event, jthread, Capabilities, ENABLE};
use crate::state::{agent, install, lock, Agent};

/// java/HeapProxy/java/lang/HeapProxy.java, compiled by build.rs.
static HEAP_PROXY_CLASS: &[u8] = include_bytes!(concat!(
    env!("OUT_DIR"),
    "/heap-proxy/java/lang/HeapProxy.class"
));

/// java/HeapProxy/java/lang/HeapProxyAllocs.java, compiled by build.rs.
static HEAP_PROXY_ALLOCS_CLASS: &[u8] = include_bytes!(concat!(
    env!("OUT_DIR"),
    "/heap-proxy/java/lang/HeapProxyAllocs.class"
));

/// java/HeapProxy/java/lang/HeapProxyCalls.java, compiled by build.rs.
static HEAP_PROXY_CALLS_CLASS: &[u8] = include_bytes!(concat!(
    env!("OUT_DIR"),
    "/heap-proxy/java/lang/HeapProxyCalls.class"
));

/// java/HeapProxy/java/lang/HeapProxyLambdas.java, compiled by build.rs.
static HEAP_PROXY_LAMBDAS_CLASS: &[u8] = include_bytes!(concat!(
    env!("OUT_DIR"),
    "/heap-proxy/java/lang/HeapProxyLambdas.class"
));

pub(crate) const CLASS_SLOTS: jint = 1 << 16;
const MAX_SITES: jint = 1 << 20;
const MAX_METHODS: jint = 1 << 20;
/// Per-thread allocation rows (HeapProxyAllocs): a thread uses the slot named by the low bits of its tid,
/// unless another live thread holds it (then it counts in the shared totals, atomically).
const THREAD_SLOTS: jint = 1 << 14;

fn since_load() -> u64 {
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

/// The agent's set-up, from `Agent_OnLoad` (ffi/java_vm.rs): an error refuses to start the VM with its
/// message as one `instr:` line.
pub fn load(vm: JavaVm, options: &str) -> Result<(), String> {
    cpu_switch::note_main_thread();
    load_in(vm, options, Phase::OnLoad).map(|_| ())
}

/// Where the agent is loaded from.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// `-agentpath:` at start-up.
    OnLoad,
    /// Into a running VM (attach.rs): only capabilities of the live phase, no early class hook.
    Attach,
}

/// The set-up both ways of loading share; returns the run-time options for attach.rs.
pub fn load_in(vm: JavaVm, options: &str, phase: Phase) -> Result<switches::RunTime, String> {
    let settings = match options::parse(options)? {
        options::Parsed::Help => {
            println!("{}", options::HELP);
            return Err("help printed; not starting the VM".into());
        }
        options::Parsed::Run(s) => s,
    };
    let run_time = settings.run_time;
    let rules = settings.rules;
    heap_dump::configure(settings.heap_dump);
    let live_every = settings.live_every;
    let live_sampling = match (live_every, settings.live_bytes) {
        (0, 0) => None,
        (0, bytes) => Some(live::Sampling::Bytes(bytes)),
        (every, _) => Some(live::Sampling::Every(every)),
    };
    check_output_writable(&rules.output_path(std::process::id()))?;
    threads::check_outputs(&rules)?;

    let jvmti = vm.jvmti()?;
    let live_caps: &[u32] = match live_sampling {
        None => &[],
        Some(live::Sampling::Every(_)) => &[
            capability::TAG_OBJECTS,
            capability::GENERATE_OBJECT_FREE_EVENTS,
        ],
        Some(live::Sampling::Bytes(_)) => &[
            capability::TAG_OBJECTS,
            capability::GENERATE_OBJECT_FREE_EVENTS,
            capability::GENERATE_SAMPLED_OBJECT_ALLOC_EVENTS,
        ],
    };
    let stack_sample_bytes = settings.stack_sample_bytes;
    let depth = rules.depth();
    let stack_caps: &[u32] = if stack_sample_bytes > 0 {
        &[capability::GENERATE_SAMPLED_OBJECT_ALLOC_EVENTS]
    } else {
        &[]
    };
    // The heap sampler's one interval, for live objects or stacks or both (options.rs makes them agree).
    let heap_sampling = match live_sampling {
        Some(live::Sampling::Bytes(bytes)) => bytes,
        _ => stack_sample_bytes,
    };
    let counting = rules.objects() || rules.arrays();
    let vm_alloc_caps: &[u32] = if rules.objects() {
        // GetBytecodes and GetConstantPool tell a clone counted after its `super.clone()` (vm_allocations.rs).
        &[
            capability::GENERATE_VM_OBJECT_ALLOC_EVENTS,
            capability::GET_BYTECODES,
            capability::GET_CONSTANT_POOL,
        ]
    } else if counting {
        &[capability::GENERATE_VM_OBJECT_ALLOC_EVENTS]
    } else {
        &[]
    };
    // No probe selected (the thread profiler alone, or nothing at all): no class is rewritten, so neither
    // the early class hook (which turns CDS off and costs start-up time) nor HeapProxy is needed.
    let rewriting = rules.objects() || rules.arrays() || rules.methods();
    // The early hook turns class-data sharing off; without it the probes go on at VM_INIT, by
    // retransformation, as after an attach or with `start=off`, and CDS stays on (cds.rs). `early=auto`
    // picks whichever costs less for these rules on this JDK.
    let from_start = rewriting && phase == Phase::OnLoad && run_time.start;
    let early = from_start
        && run_time
            .early
            .unwrap_or_else(|| cds::early_pays(&rules, jvmti.jdk_feature()));
    let class_hook_caps: &[u32] = if early {
        &[
            capability::GENERATE_ALL_CLASS_HOOK_EVENTS,
            capability::GENERATE_EARLY_CLASS_HOOK_EVENTS,
            capability::GENERATE_EARLY_VMSTART,
        ]
    } else if rewriting {
        &[capability::GENERATE_ALL_CLASS_HOOK_EVENTS]
    } else {
        &[]
    };
    let wanted = [
        capability::GET_SOURCE_FILE_NAME,
        capability::GET_LINE_NUMBERS,
        capability::GENERATE_GARBAGE_COLLECTION_EVENTS,
    ];
    let potential = jvmti.potential_capabilities();
    let mut caps = Capabilities::default();
    for &bit in class_hook_caps
        .iter()
        .chain(&wanted)
        .chain(live_caps)
        .chain(stack_caps)
        .chain(vm_alloc_caps)
    {
        if !potential.has(bit) {
            return Err(format!(
                "this VM does not offer the JVMTI capability {}",
                capability::name(bit)
            ));
        }
        caps = caps.with(bit);
    }
    // Retransformation is how probes start and stop while the program runs (switches.rs). The VM then
    // keeps the original bytes of every class the hook changes, so `control=off` at start-up, which
    // rules out switching, does without it.
    let switchable = !early || run_time.control;
    let caps = match (rewriting, potential.has(capability::RETRANSFORM_CLASSES)) {
        // GetBytecodes (and GetConstantPool, to tell the calls that return an array the VM made) let a
        // start leave alone the classes the probes would not change (switches.rs); without them every
        // selected class is retransformed.
        (true, true)
            if switchable
                && potential.has(capability::GET_BYTECODES)
                && potential.has(capability::GET_CONSTANT_POOL) =>
        {
            caps.with(capability::RETRANSFORM_CLASSES)
                .with(capability::GET_BYTECODES)
                .with(capability::GET_CONSTANT_POOL)
        }
        (true, true) if switchable => caps.with(capability::RETRANSFORM_CLASSES),
        (true, false) if !early => {
            return Err("this VM cannot retransform classes (can_retransform_classes)".into())
        }
        _ => caps,
    };
    let caps = threads::add_capabilities(rules.threads(), &potential, caps)?;
    let caps = sampler::add_capabilities(&rules, &potential, caps)?;
    if jvmti.add_capabilities(&caps) != jvmti::ERROR_NONE {
        return Err("AddCapabilities failed".into());
    }
    since_load();
    switches::init(early);
    cds::configure(from_start && !early);
    if from_start {
        metaspace::make_room();
        if counting {
            allocating_intrinsics::keep_allocations_in_bytecode(&rules);
        }
    }
    control::configure(run_time.control);
    // A JVM loaded with every probe off, to be switched at run time: its lambdas go through the table
    // from VM_INIT on (lambda_classes.rs).
    let on_demand = phase == Phase::OnLoad && !run_time.start && run_time.control;
    lambda_classes::configure(
        run_time.keep_lambdas,
        on_demand && caps.has(capability::RETRANSFORM_CLASSES),
    );
    install(Agent {
        jvmti,
        java_vm: vm,
        rules,
        live_every,
        live: live_sampling.map(|s| live::Live::new(s, MAX_SITES as usize, CLASS_SLOTS as usize)),
        sampled_stacks: (stack_sample_bytes > 0)
            .then(|| sampled_stacks::SampledStacks::new(stack_sample_bytes, depth)),
        call_times: settings.call_times,
        exact_clock: settings.exact_clock,
        call_probes: match (settings.call_times, settings.timed_leaves) {
            (false, _) => CallProbes::Counted,
            (true, false) => CallProbes::TracedExceptLeaves,
            (true, true) => CallProbes::Traced,
        },
        ids: Default::default(),
        engaged: Default::default(),
        proxy: Default::default(),
        calls_proxy: Default::default(),
        class_index: std::sync::Mutex::new(class_index::ClassIndex::new(CLASS_SLOTS as usize)),
        stacks: Default::default(),
        early_probes: Default::default(),
        vm_allocators: Default::default(),
        thread_rows: Default::default(),
        failed: Default::default(),
        gc: Default::default(),
        text_cutoff: settings.cutoff,
    });
    let mut handlers = Handlers {
        vm_start: early.then_some(vm_start as fn(Jni)),
        vm_init: Some(vm_init),
        vm_death: Some(vm_death),
        class_file_load_hook: Some(hook::class_file_load_hook),
        gc_start: Some(gc_start),
        gc_finish: Some(gc_finish),
        object_free: Some(object_free::object_free),
        data_dump_request: Some(data_dump_request),
        thread_start: Some(thread_start),
        thread_end: Some(thread_end),
        vm_object_alloc: Some(vm_allocations::vm_object_alloc),
        sampled_object_alloc: Some(heap_sampling::sampled_object_alloc),
        ..Handlers::default()
    };
    if let Some(a) = agent() {
        threads::install(jvmti, &a.rules, &caps, &mut handlers);
        sampler::install(jvmti, &a.rules, settings.sample_threads, &mut handlers)?;
    }
    // `start cpu` may start the sampler later (cpu_switch.rs): its handlers go in front now.
    if sampler::sampler().is_none() {
        sampler::wrap_handlers(&mut handlers);
    }
    // `start monitors` may enable the monitor events later (monitor_switch.rs); JVMTI takes one table.
    if handlers.monitor_contended_enter.is_none() {
        monitors::register(&mut handlers);
    }
    ffi::events::install(jvmti, handlers)?;
    if live_sampling.is_some() && object_free::set_enabled(jvmti, true) != jvmti::ERROR_NONE {
        return Err("cannot enable the JVMTI OBJECT_FREE event".into());
    }
    if heap_sampling > 0
        && (jvmti.set_heap_sampling_interval(heap_sampling as jint) != jvmti::ERROR_NONE
            || jvmti.set_event_notification_mode(event::SAMPLED_OBJECT_ALLOC, ENABLE)
                != jvmti::ERROR_NONE)
    {
        return Err("cannot enable the JVMTI SampledObjectAlloc event".into());
    }
    // Enabled here when the probes count from the start; otherwise by `start alloc` (switches.rs).
    let counting_now = counting && early;
    if counting_now
        && jvmti.set_event_notification_mode(event::VM_OBJECT_ALLOC, ENABLE) != jvmti::ERROR_NONE
    {
        return Err("cannot enable the JVMTI VM_OBJECT_ALLOC event".into());
    }
    // Allocation counts live in per-thread rows, which an ending thread hands over (thread_rows.rs).
    if counting && jvmti.set_event_notification_mode(event::THREAD_END, ENABLE) != jvmti::ERROR_NONE
    {
        return Err("cannot enable the JVMTI THREAD_END event".into());
    }
    for e in [
        event::DATA_DUMP_REQUEST,
        event::VM_START,
        event::VM_INIT,
        event::VM_DEATH,
        event::CLASS_FILE_LOAD_HOOK,
        event::GARBAGE_COLLECTION_START,
        event::GARBAGE_COLLECTION_FINISH,
    ]
    .into_iter()
    .filter(|&e| early || (e != event::VM_START && e != event::CLASS_FILE_LOAD_HOOK))
    {
        if jvmti.set_event_notification_mode(e, ENABLE) != jvmti::ERROR_NONE {
            return Err(format!("cannot enable JVMTI event {e}"));
        }
    }
    threads::enable_events(jvmti)?;
    monitor_switch::init(agent().is_some_and(|a| {
        let t = a.rules.threads();
        t.enabled && (t.monitors || t.trace.is_some())
    }));
    sampler::enable_events(jvmti)?;
    Ok(run_time)
}

/// Fails at start-up, not at exit, when the reports could not be written.
/// The probe is the very temporary file the report writer will create, and is removed whatever happened.
fn check_output_writable(prefix: &str) -> Result<(), String> {
    let probe = report_files::temp_path(&format!("{prefix}.json"));
    let written = std::fs::write(&probe, b"");
    let _ = std::fs::remove_file(&probe);
    written.map_err(|e| format!("cannot write reports to {prefix}.json: {e}"))
}

/// Defines HeapProxy unless no probe is in the rules (then nothing is rewritten and nothing calls it).
pub fn define_proxy(jni: Jni) {
    if let Some(a) = agent() {
        if a.rules.objects() || a.rules.arrays() || a.rules.methods() {
            vm_start(jni);
        }
    }
}

fn vm_start(jni: Jni) {
    {
        let Some(a) = agent() else { return };
        // Early VM_START: no bytecode has run yet. An exception raised now would be fatal, so every call
        // clears what it raises.
        match jni.define_boot_class("java/lang/HeapProxy", HEAP_PROXY_CLASS) {
            Some(c) => *lock(&a.proxy) = Some(GlobalRef(jni.new_global(c))),
            None => eprintln!("instr: cannot define java.lang.HeapProxy; nothing will be counted"),
        }
        // HeapProxy's allocation probes delegate to it: without it HeapProxy.engage fails, and nothing
        // is counted.
        if jni
            .define_boot_class("java/lang/HeapProxyAllocs", HEAP_PROXY_ALLOCS_CLASS)
            .is_none()
        {
            eprintln!("instr: cannot define java.lang.HeapProxyAllocs; no allocation counts");
        }
        match jni.define_boot_class("java/lang/HeapProxyCalls", HEAP_PROXY_CALLS_CLASS) {
            Some(c) => *lock(&a.calls_proxy) = Some(GlobalRef(jni.new_global(c))),
            None => eprintln!("instr: cannot define java.lang.HeapProxyCalls; no call counts"),
        }
        // Without it a run-time start gives lambdas new classes, as before (lambda_classes.rs).
        if jni
            .define_boot_class("java/lang/HeapProxyLambdas", HEAP_PROXY_LAMBDAS_CLASS)
            .is_none()
        {
            eprintln!("instr: cannot define java.lang.HeapProxyLambdas; lambdas get new classes at each start and stop");
        }
    }
}

fn vm_init(jni: Jni, _thread: jthread) {
    threads::vm_init(jni);
    cds::start_probes(jni);
    engage(jni);
    lambda_classes::at_vm_init(jni);
    control::start(jni);
}

/// Engages HeapProxy (defining it first when no early VM_START did): from here on every class is rewritten
/// with the native flavour.
pub fn engage(jni: Jni) {
    {
        let Some(a) = agent() else { return };
        if lock(&a.proxy).is_none() {
            define_proxy(jni);
        }
        let Some(proxy) = *lock(&a.proxy) else { return };
        let (header, reference) = array_layout(a, jni);
        let Some(offsets) = element_offsets(jni) else {
            eprintln!("instr: cannot read the array layout from jdk.internal.misc.Unsafe; nothing will be counted");
            return;
        };
        let Some(engage) = jni.static_method(proxy.0, "engage", "(IIIIJIJJJJJJII)V") else {
            eprintln!("instr: HeapProxy.engage not found; nothing will be counted");
            return;
        };
        for (slot, (name, descriptor)) in [
            ("earlyObjectNew", "(I)V"),
            ("earlyArrayAlloc", "(Ljava/lang/Object;I)V"),
        ]
        .into_iter()
        .enumerate()
        {
            if let Some(m) = jni.static_method(proxy.0, name, descriptor) {
                a.early_probes[slot].store(m as usize, Ordering::Relaxed);
            }
        }
        let methods = if a.rules.methods() { MAX_METHODS } else { 1 };
        let counting = a.rules.objects() || a.rules.arrays();
        // The call side first: HeapProxy's method probes delegate to it as soon as HeapProxy is engaged.
        if !calls::engage(a, jni, methods, &offsets) {
            eprintln!("instr: HeapProxyCalls.engage failed; nothing will be counted");
            return;
        }
        let args = [
            // With sampled stacks the probes count per static site, as at depth 1, and walk nothing.
            jvalue {
                i: if a.sampled_stacks.is_some() {
                    1
                } else {
                    a.rules.depth() as jint
                },
            },
            // Nothing counted (method probes only, or nothing selected): no megabyte of empty class tables
            // in the application's heap, where they would change how the collector sizes it.
            jvalue {
                i: if counting { CLASS_SLOTS } else { 1 },
            },
            jvalue {
                i: if counting { MAX_SITES } else { 1 },
            },
            jvalue { i: methods },
            jvalue { j: header },
            jvalue { i: reference },
            jvalue { j: offsets[0] },
            jvalue { j: offsets[1] },
            jvalue { j: offsets[2] },
            jvalue { j: offsets[3] },
            jvalue { j: offsets[4] },
            jvalue { j: offsets[5] },
            jvalue {
                i: a.live_every as jint,
            },
            jvalue {
                i: if counting { THREAD_SLOTS } else { 1 },
            },
        ];
        if a.rules.threads().trace_allocations {
            if let Some(f) = jni.static_field(proxy.0, "traceObjects", "Z") {
                jni.set_static_boolean(proxy.0, f, true);
            }
        }
        if jni.call_static_void(proxy.0, engage, &args) {
            natives::link(jni, proxy.0);
            a.vm_allocators.resolve(jni, proxy.0);
            a.thread_rows.resolve(jni, proxy.0);
            vm_allocations::hook_alloc_object(a);
            monitors::remember_own_locks(jni);
            a.engaged.store(true, Ordering::Release);
            // The ids the early classes were given, before the rows could be lengthened.
            calls::cover_method_ids(a, jni);
        } else {
            eprintln!("instr: HeapProxy.engage failed; nothing will be counted");
        }
    }
}

/// Unsafe's base offset and index scale of `long[]`, `Object[]` and `int[]`, for HeapProxy's atomics.
/// `arrayBaseOffset` returns `int` up to JDK 22 and `long` after; JNI finds whichever this VM has.
fn element_offsets(jni: Jni) -> Option<[i64; 6]> {
    let unsafe_class = jni.find_class("jdk/internal/misc/Unsafe")?;
    let get = jni.static_method(unsafe_class, "getUnsafe", "()Ljdk/internal/misc/Unsafe;")?;
    let u = jni.call_static_object(unsafe_class, get, &[])?;
    let scale = jni.method(unsafe_class, "arrayIndexScale", "(Ljava/lang/Class;)I")?;
    let base_int = jni.method(unsafe_class, "arrayBaseOffset", "(Ljava/lang/Class;)I");
    let base_long = jni.method(unsafe_class, "arrayBaseOffset", "(Ljava/lang/Class;)J");
    let mut out = [0i64; 6];
    for (k, array_class) in ["[J", "[Ljava/lang/Object;", "[I"].into_iter().enumerate() {
        let c = jni.find_class(array_class)?;
        let arg = [jvalue { l: c }];
        out[2 * k] = match (base_int, base_long) {
            (Some(m), _) => jni.call_int(u, m, &arg)? as i64,
            (None, Some(m)) => jni.call_long(u, m, &arg)?,
            (None, None) => return None,
        };
        out[2 * k + 1] = jni.call_int(u, scale, &arg)? as i64;
        jni.delete_local(c);
    }
    Some(out)
}

/// Array header size and reference size, measured on this VM (compressed oops or not).
fn array_layout(a: &Agent, jni: Jni) -> (i64, jint) {
    let empty = jni.new_int_array(0);
    let header = a.jvmti.object_size(empty).unwrap_or(16);
    jni.delete_local(empty);
    let reference = jni
        .find_class("java/lang/Object")
        .map(|object| {
            let (a0, a16) = (
                jni.new_object_array(0, object),
                jni.new_object_array(16, object),
            );
            let r = (a.jvmti.object_size(a16).unwrap_or(80)
                - a.jvmti.object_size(a0).unwrap_or(16))
                / 16;
            jni.delete_local(a0);
            jni.delete_local(a16);
            r as jint
        })
        .unwrap_or(4);
    (header, reference)
}

fn vm_death(jni: Jni) {
    control::close();
    heap_dump::at_exit(jni);
    threads::vm_death(jni);
    let Some(a) = agent() else { return };
    // Without HeapProxy (no probe selected) the report still has the GC summary, and empty tables.
    let proxy = lock(&a.proxy).map_or(std::ptr::null_mut(), |p| p.0);
    report::write_all(a, jni, proxy, report::When::AtExit);
}

/// SIGQUIT or `jcmd <pid> JVMTI.data_dump`: the reports as they are now, while the program runs on,
/// and, with the thread profiler, a monitor dump and deadlock check (deadlocks.rs).
fn data_dump_request() {
    deadlocks::data_dump_request();
    heap_dump::on_demand();
    let Some(a) = agent() else { return };
    let proxy = if a.engaged.load(Ordering::Acquire) {
        let Some(proxy) = *lock(&a.proxy) else { return };
        proxy.0
    } else if sampler::sampler().is_some() && lock(&a.proxy).is_none() {
        // Sampling alone defines no HeapProxy: the report has its samples, and empty tables.
        std::ptr::null_mut()
    } else {
        return;
    };
    // Sent on the signal dispatcher or attach listener thread: Java threads, attached already.
    let Some(jni) = a.java_vm.jni() else { return };
    report::write_all(a, jni, proxy, report::When::OnDemand);
}

/// ThreadStart, on the new thread before its `run`: the thread profiler's record, then the thread's call rows.
fn thread_start(jni: Jni, thread: jthread) {
    threads::thread_started(jni, thread);
    if let Some(a) = agent() {
        calls::adopt_current_thread(a, jni);
    }
}

/// ThreadEnd, on the ending thread: the thread profiler's record, then the thread's allocation rows.
fn thread_end(jni: Jni, thread: jthread) {
    threads::thread_ended(jni, thread);
    thread_rows::thread_ended(jni);
}

// GC start/finish run on the VM thread inside the pause (docs/ARCHITECTURE.md, "Callback contexts"):
// atomics, clock reads and the trace's lock-free ring only. No JNI, no JVMTI, no allocation, and no lock,
// since a Java thread holding one may be waiting for this very safepoint.
fn gc_start() {
    if let Some(a) = agent() {
        a.gc.started.store(since_load(), Ordering::Relaxed);
    }
    xml_trace::gc(true);
}

fn gc_finish() {
    if let Some(a) = agent() {
        let pause = since_load().saturating_sub(a.gc.started.load(Ordering::Relaxed));
        a.gc.count.fetch_add(1, Ordering::Relaxed);
        a.gc.total_nanos.fetch_add(pause, Ordering::Relaxed);
        a.gc.max_nanos.fetch_max(pause, Ordering::Relaxed);
    }
    xml_trace::gc(false);
}
