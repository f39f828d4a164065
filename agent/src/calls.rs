//! The method-call side of the agent: engaging `java.lang.HeapProxyCalls` at VM_INIT and the natives it
//! calls (`Java_java_lang_HeapProxyCalls_*`): the thread CPU clock, and the name -> id lookups behind the
//! `instr.Counts` test API. The reports are in `method_report.rs`.

use instr_rewriter::probes::Selection;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use jni_sys::{jint, jintArray, jlongArray, jmethodID, jstring, jvalue};

use crate::jni::Jni;
use crate::state::{agent, lock, Agent};

/// Thread slots of HeapProxyCalls: threads whose tid is below DIRECT_SLOTS own the slot of that number;
/// the OVERFLOW_SLOTS after them are claimed by threads with larger tids and freed at their ThreadEnd.
/// Threads beyond those (alive at once) count in shared rows with atomic adds: exact, untimed, reported.
const DIRECT_SLOTS: jint = 1 << 14;
const OVERFLOW_SLOTS: jint = 1 << 12;

/// `HeapProxyCalls.reserve(int)` and `adopt()`, found once the class is engaged (0 until then), and the
/// length every thread's row of calls has (what `reserve` last returned). Threads get their rows at their
/// start, and rows are lengthened as the rewriter gives out ids, so that the probe's slow branch is never
/// taken in a steady run: see `HeapProxyCalls.enterRowLength` for why that matters to the JIT.
static RESERVE: AtomicUsize = AtomicUsize::new(0);
static ADOPT: AtomicUsize = AtomicUsize::new(0);
static ROW_LENGTH: AtomicUsize = AtomicUsize::new(0);

/// What `HeapProxyCalls.<clinit>` reads through its `settings()` native: see that class's `SETTINGS`.
static SETTINGS: Mutex<Option<[i64; 9]>> = Mutex::new(None);

/// Records the settings and calls `HeapProxyCalls.engage()`, whose first call initialises the class with
/// them. `offsets` are Unsafe's `[long base, long scale, ref base, ref scale, ...]`. False when the class is
/// missing or its initialisation failed.
pub fn engage(a: &Agent, jni: Jni, max_methods: jint, offsets: &[i64; 6]) -> bool {
    let Some(class) = *lock(&a.calls_proxy) else {
        return false;
    };
    let times = a.call_times && a.rules.methods();
    let clock = if times && !a.exact_clock {
        start_ticker()
    } else {
        0
    };
    let (direct, all) = if a.rules.methods() {
        (DIRECT_SLOTS, DIRECT_SLOTS + OVERFLOW_SLOTS)
    } else {
        (1, 1)
    };
    *lock(&SETTINGS) = Some([
        times as i64,
        clock,
        max_methods as i64,
        direct as i64,
        all as i64,
        offsets[0],
        offsets[1],
        offsets[2],
        offsets[3],
    ]);
    let Some(m) = jni.static_method(class.0, "engage", "()V") else {
        return false;
    };
    if !jni.call_static_void(class.0, m, &[]) {
        return false;
    }
    if a.rules.methods() {
        for (cell, name, signature) in [(&RESERVE, "reserve", "(I)I"), (&ADOPT, "adopt", "()V")] {
            if let Some(m) = jni.static_method(class.0, name, signature) {
                cell.store(m as usize, Ordering::Release);
            }
        }
        // New threads are adopted at their start (lib.rs); rows are lengthened once HeapProxy is engaged.
        if a.jvmti
            .set_event_notification_mode(crate::jvmti::event::THREAD_START, crate::jvmti::ENABLE)
            != crate::jvmti::ERROR_NONE
        {
            eprintln!("instr: cannot enable JVMTI THREAD_START: threads get their call rows at their first call");
        }
    }
    // An ending thread hands its call rows over (HeapProxyCalls.retire, through HeapProxy.retireThread, which
    // thread_rows.rs calls from ThreadEnd), so that its slot can serve another thread. lib.rs enables the
    // event only when allocations are counted; the callback is always installed. Without it calls stay
    // exact (threads past the slots count in the shared rows), only slower and untimed.
    if a.rules.methods()
        && a.jvmti
            .set_event_notification_mode(crate::jvmti::event::THREAD_END, crate::jvmti::ENABLE)
            != crate::jvmti::ERROR_NONE
    {
        eprintln!(
            "instr: cannot enable JVMTI THREAD_END: call slots of ended threads are not reused"
        );
    }
    true
}

/// Lengthens every thread's row of calls to hold the method ids given out so far, if they do not yet. Called
/// from ClassFileLoadHook once a class is rewritten, before any of its methods can run.
pub fn cover_method_ids(a: &Agent, jni: Jni) {
    let reserve = RESERVE.load(Ordering::Acquire);
    // Ids start at 1: the highest is the count, and a row must have an element at that index.
    let wanted = a.ids.method_count() + 1;
    // Once the exit report has begun (engaged goes false) it holds the rows' lock: a class loading then
    // leaves its threads to lengthen their own rows rather than wait for the report here.
    if reserve == 0
        || wanted <= ROW_LENGTH.load(Ordering::Relaxed)
        || !a.engaged.load(Ordering::Acquire)
    {
        return;
    }
    let Some(class) = *lock(&a.calls_proxy) else {
        return;
    };
    let arg = jvalue {
        i: jint::try_from(wanted).unwrap_or(jint::MAX),
    };
    let length = jni
        .keeping_pending_exception(|| jni.call_static_int(class.0, reserve as jmethodID, &[arg]));
    if let Some(length) = length {
        ROW_LENGTH.fetch_max(length.max(0) as usize, Ordering::Relaxed);
    }
}

/// ThreadStart, on the new thread: its slot and rows, before its first probe.
pub fn adopt_current_thread(a: &Agent, jni: Jni) {
    let adopt = ADOPT.load(Ordering::Acquire);
    if adopt == 0 {
        return;
    }
    let Some(class) = *lock(&a.calls_proxy) else {
        return;
    };
    jni.keeping_pending_exception(|| jni.call_static_void(class.0, adopt as jmethodID, &[]));
}

/// `HeapProxyCalls.settings()`: what engage() recorded, or settings that leave the counters off.
pub fn settings(jni: Jni) -> jlongArray {
    let off = [0, 0, 1, 0, 1, 0, 8, 0, 4];
    jni.new_long_array(&lock(&SETTINGS).unwrap_or(off))
}

/// How often the times-mode wall clock advances (`calls=times` without `clock=exact`).
pub const TICK: std::time::Duration = std::time::Duration::from_micros(100);

/// The times-mode wall clock: nanoseconds since the agent loaded, advanced by one agent thread every
/// [`TICK`] and read by HeapProxyCalls with a single load at its address. A probe that read the OS clock
/// instead would pay `System.nanoTime` at every entry and exit (measured at 35-70 ns on the benchmark VM).
static CLOCK: std::sync::atomic::AtomicI64 = std::sync::atomic::AtomicI64::new(1);

/// Starts the ticker thread (not a Java thread: it never touches the VM) and returns the clock's address.
fn start_ticker() -> i64 {
    let start = std::time::Instant::now();
    let spawned = std::thread::Builder::new()
        .name("instr-clock".into())
        .spawn(move || loop {
            std::thread::sleep(TICK);
            let ns = start.elapsed().as_nanos() as i64 + 1;
            CLOCK.store(ns, std::sync::atomic::Ordering::Relaxed);
        });
    if spawned.is_err() {
        return 0; // no thread: fall back to System.nanoTime
    }
    CLOCK.as_ptr() as i64
}

pub use crate::ffi::libc::thread_cpu_now;

/// `com.example.Foo` or `com/example/Foo` -> `com/example/Foo`.
fn internal(class: &str) -> String {
    class.replace('.', "/")
}

/// `HeapProxyCalls.methodIds(class, name, descriptor)`: the ids of the methods so named (instr.Counts).
pub fn method_ids(jni: Jni, class: jstring, name: jstring, descriptor: jstring) -> jintArray {
    {
        let (Some(a), Some(class), Some(name)) = (agent(), jni.string(class), jni.string(name))
        else {
            return jni.new_int_array_of(&[]);
        };
        let descriptor = jni.string(descriptor);
        let class = internal(&class);
        let ids: Vec<i32> = a
            .ids
            .methods()
            .into_iter()
            .filter(|m| {
                m.class == class
                    && m.name == name
                    && descriptor.as_ref().is_none_or(|d| *d == m.descriptor)
            })
            .map(|m| m.id as i32)
            .collect();
        jni.new_int_array_of(&ids)
    }
}

/// `HeapProxyCalls.classSelected(class)`: whether the rules select methods of the class.
pub fn class_selected(jni: Jni, class: jstring) -> bool {
    match (agent(), jni.string(class)) {
        (Some(a), Some(c)) => a.rules.methods() && a.rules.class_wanted(internal(&c).as_bytes()),
        _ => false,
    }
}

/// `HeapProxyCalls.siteIds(class, method, line)`: the allocation sites there (instr.Counts).
pub fn site_ids(jni: Jni, class: jstring, name: jstring, line: jint) -> jintArray {
    {
        let (Some(a), Some(class), Some(name)) = (agent(), jni.string(class), jni.string(name))
        else {
            return jni.new_int_array_of(&[]);
        };
        let class = internal(&class);
        let methods: std::collections::HashSet<u32> = a
            .ids
            .methods()
            .into_iter()
            .filter(|m| m.class == class && m.name == name)
            .map(|m| m.id)
            .collect();
        let ids: Vec<i32> = a
            .ids
            .sites()
            .into_iter()
            .filter(|s| methods.contains(&s.method))
            .filter(|s| line < 0 || s.line.map(i32::from) == Some(line))
            .map(|s| s.id as i32)
            .collect();
        jni.new_int_array_of(&ids)
    }
}
