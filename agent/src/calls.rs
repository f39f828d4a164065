//! The method-call side of the agent: engaging `java.lang.HeapProxyCalls` at VM_INIT and the natives it
//! calls (`Java_java_lang_HeapProxyCalls_*`): the thread CPU clock, and the name -> id lookups behind the
//! `instr.Counts` test API. The reports are in `method_report.rs`.

// Object handles are opaque and only passed back to the VM (see jni.rs).
#![allow(clippy::not_unsafe_ptr_arg_deref)]

use std::ffi::{c_char, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};

use instr_rewriter::probes::Selection;
use std::sync::Mutex;

use jni_sys::{jboolean, jclass, jint, jintArray, jlong, jlongArray, jstring, JNIEnv};

use crate::jni::Jni;
use crate::state::{agent, lock, Agent};

/// Thread slots of HeapProxyCalls: threads whose tid is below DIRECT_SLOTS own the slot of that number;
/// the OVERFLOW_SLOTS after them are claimed by threads with larger tids and freed at their ThreadEnd.
/// Threads beyond those (alive at once) count in shared rows with atomic adds: exact, untimed, reported.
const DIRECT_SLOTS: jint = 1 << 14;
const OVERFLOW_SLOTS: jint = 1 << 12;

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
    // An ending thread hands its call rows over (HeapProxyCalls.retire, through HeapProxy.retireThread, which
    // thread_rows.rs calls from ThreadEnd), so that its slot can serve another thread. lib.rs enables the
    // event only when allocations are counted; the callback is always installed. Without it calls stay
    // exact (threads past the slots count in the shared rows), only slower and untimed.
    if a.rules.methods()
        && a.jvmti
            .set_event_notification_mode(crate::jvmti::event::THREAD_END, crate::jvmti::ENABLE)
            != crate::jvmti::ERROR_NONE
    {
        eprintln!("instr: cannot enable JVMTI THREAD_END: call slots of ended threads are not reused");
    }
    true
}

#[no_mangle]
pub extern "system" fn Java_java_lang_HeapProxyCalls_settings(
    env: *mut JNIEnv,
    _: jclass,
) -> jlongArray {
    let off = [0, 0, 1, 0, 1, 0, 8, 0, 4];
    let settings = catch_unwind(|| lock(&SETTINGS).unwrap_or(off)).unwrap_or(off);
    long_array(Jni(env), &settings)
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

#[repr(C)]
struct Timespec {
    tv_sec: i64,
    tv_nsec: i64,
}

extern "C" {
    fn clock_gettime(clock: i32, ts: *mut Timespec) -> i32;
}

/// Linux's per-thread CPU clock of the calling thread.
const CLOCK_THREAD_CPUTIME_ID: i32 = 3;

/// CPU time of the calling thread in nanoseconds (0 if the clock cannot be read).
pub fn thread_cpu_now() -> i64 {
    let mut ts = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the clock id is a constant Linux defines.
    if unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut ts) } != 0 {
        return 0;
    }
    ts.tv_sec * 1_000_000_000 + ts.tv_nsec
}

#[no_mangle]
pub extern "system" fn Java_java_lang_HeapProxyCalls_cpuNow(_env: *mut JNIEnv, _: jclass) -> jlong {
    thread_cpu_now()
}

/// A Java string's contents (None for null).
fn string(jni: Jni, s: jstring) -> Option<String> {
    if s.is_null() {
        return None;
    }
    // SAFETY: `s` is a live local reference to a java.lang.String passed in by the VM.
    unsafe {
        let env = jni.0;
        let chars: *const c_char =
            ((**env).GetStringUTFChars.unwrap())(env, s, std::ptr::null_mut());
        if chars.is_null() {
            jni.clear_exception();
            return None;
        }
        let out = CStr::from_ptr(chars).to_string_lossy().into_owned();
        ((**env).ReleaseStringUTFChars.unwrap())(env, s, chars);
        Some(out)
    }
}

fn long_array(jni: Jni, values: &[i64]) -> jlongArray {
    // SAFETY: plain JNI array calls on the current thread's env.
    unsafe {
        let env = jni.0;
        let array = ((**env).NewLongArray.unwrap())(env, values.len() as jint);
        if array.is_null() {
            jni.clear_exception();
            return array;
        }
        ((**env).SetLongArrayRegion.unwrap())(env, array, 0, values.len() as jint, values.as_ptr());
        array
    }
}

fn int_array(jni: Jni, values: &[i32]) -> jintArray {
    // SAFETY: plain JNI array calls on the current thread's env.
    unsafe {
        let env = jni.0;
        let array = ((**env).NewIntArray.unwrap())(env, values.len() as jint);
        if array.is_null() {
            jni.clear_exception();
            return array;
        }
        ((**env).SetIntArrayRegion.unwrap())(env, array, 0, values.len() as jint, values.as_ptr());
        array
    }
}

/// `com.example.Foo` or `com/example/Foo` -> `com/example/Foo`.
fn internal(class: &str) -> String {
    class.replace('.', "/")
}

#[no_mangle]
pub extern "system" fn Java_java_lang_HeapProxyCalls_methodIds(
    env: *mut JNIEnv,
    _: jclass,
    class: jstring,
    name: jstring,
    descriptor: jstring,
) -> jintArray {
    let result = catch_unwind(AssertUnwindSafe(|| {
        let jni = Jni(env);
        let (Some(a), Some(class), Some(name)) = (agent(), string(jni, class), string(jni, name))
        else {
            return int_array(jni, &[]);
        };
        let descriptor = string(jni, descriptor);
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
        int_array(jni, &ids)
    }));
    result.unwrap_or(std::ptr::null_mut())
}

#[no_mangle]
pub extern "system" fn Java_java_lang_HeapProxyCalls_classSelected(
    env: *mut JNIEnv,
    _: jclass,
    class: jstring,
) -> jboolean {
    let result = catch_unwind(AssertUnwindSafe(|| {
        let jni = Jni(env);
        match (agent(), string(jni, class)) {
            (Some(a), Some(c)) => {
                a.rules.methods() && a.rules.class_wanted(internal(&c).as_bytes())
            }
            _ => false,
        }
    }));
    result.unwrap_or(false) as jboolean
}

#[no_mangle]
pub extern "system" fn Java_java_lang_HeapProxyCalls_siteIds(
    env: *mut JNIEnv,
    _: jclass,
    class: jstring,
    name: jstring,
    line: jint,
) -> jintArray {
    let result = catch_unwind(AssertUnwindSafe(|| {
        let jni = Jni(env);
        let (Some(a), Some(class), Some(name)) = (agent(), string(jni, class), string(jni, name))
        else {
            return int_array(jni, &[]);
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
        int_array(jni, &ids)
    }));
    result.unwrap_or(std::ptr::null_mut())
}
