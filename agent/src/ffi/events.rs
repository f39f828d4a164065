//! Every JVMTI event enters the agent here. The agent registers safe Rust functions ([`Handlers`]); this
//! file owns the one `extern "system"` trampoline per event, which turns the VM's raw pointers into the
//! layer's handles, runs the handler under the guard, and copies a rewritten class into JVMTI memory.
//! No other file in the agent defines a function the VM calls.

use std::ffi::{c_char, c_uchar, c_void, CStr};
use std::sync::OnceLock;

use jni_sys::{jboolean, jclass, jint, jlong, jobject, JNIEnv};

use super::guard::{guard, Policy};
use super::jni::Jni;
use super::jvmti::{event, jthread, Env, EventCallbacks, Jvmti, JvmtiError};

/// A class file load: (the thread's JNI environment, None in the primordial phase; internal name, empty
/// when the VM gave none; the class bytes) -> the new bytes, or None to keep them.
pub type ClassFileLoadHandler = fn(Option<Jni>, &[u8], &[u8]) -> Option<Vec<u8>>;
/// An allocation the VM reports: (thread, object, class, size in bytes).
pub type AllocationHandler = fn(Jni, jthread, jobject, jclass, jlong);

/// The agent's handler of each event it enables; `None` leaves the event's slot empty.
#[derive(Default, Clone, Copy)]
pub struct Handlers {
    pub vm_start: Option<fn(Jni)>,
    pub vm_init: Option<fn(Jni, jthread)>,
    pub vm_death: Option<fn(Jni)>,
    pub class_file_load_hook: Option<ClassFileLoadHandler>,
    pub class_load: Option<fn(Jni, jthread, jclass)>,
    pub class_prepare: Option<fn(Jni, jthread, jclass)>,
    /// The handler gets nothing: the sampler enables the event only so that HotSpot records debug
    /// information at every instruction, not only at safepoints (what AsyncGetCallTrace reads).
    pub compiled_method_load: Option<fn()>,
    pub thread_start: Option<fn(Jni, jthread)>,
    pub thread_end: Option<fn(Jni, jthread)>,
    pub virtual_thread_start: Option<fn(Jni, jthread)>,
    pub virtual_thread_end: Option<fn(Jni, jthread)>,
    /// Inside a GC pause: no JNI, no lock a Java thread may hold, no allocation (Callback contexts).
    pub gc_start: Option<fn()>,
    pub gc_finish: Option<fn()>,
    /// Inside a GC: the same rules as the GC events.
    pub object_free: Option<fn(jlong)>,
    pub data_dump_request: Option<fn()>,
    pub vm_object_alloc: Option<AllocationHandler>,
    pub sampled_object_alloc: Option<AllocationHandler>,
    pub monitor_contended_enter: Option<fn(Jni, jthread, jobject)>,
    pub monitor_contended_entered: Option<fn(Jni, jthread, jobject)>,
    pub monitor_wait: Option<fn(Jni, jthread, jobject, jlong)>,
    pub monitor_waited: Option<fn(Jni, jthread, jobject, bool)>,
}

static HANDLERS: OnceLock<Handlers> = OnceLock::new();

fn handlers() -> &'static Handlers {
    static NONE: Handlers = Handlers {
        vm_start: None,
        vm_init: None,
        vm_death: None,
        class_file_load_hook: None,
        class_load: None,
        class_prepare: None,
        compiled_method_load: None,
        thread_start: None,
        thread_end: None,
        virtual_thread_start: None,
        virtual_thread_end: None,
        gc_start: None,
        gc_finish: None,
        object_free: None,
        data_dump_request: None,
        vm_object_alloc: None,
        sampled_object_alloc: None,
        monitor_contended_enter: None,
        monitor_contended_entered: None,
        monitor_wait: None,
        monitor_waited: None,
    };
    HANDLERS.get().unwrap_or(&NONE)
}

/// Registers `h` with the VM (once per agent: JVMTI keeps one callback table per environment).
pub fn install(jvmti: Jvmti, h: Handlers) -> Result<(), String> {
    if HANDLERS.set(h).is_err() {
        return Err("event handlers installed twice".into());
    }
    let mut c = EventCallbacks::default();
    macro_rules! slot {
        ($field:ident, $event:expr, $trampoline:expr) => {
            if h.$field.is_some() {
                c.set($event, $trampoline);
            }
        };
    }
    type Plain = unsafe extern "system" fn(Env);
    type WithJni = unsafe extern "system" fn(Env, *mut JNIEnv);
    type Thread = unsafe extern "system" fn(Env, *mut JNIEnv, jthread);
    type Object = unsafe extern "system" fn(Env, *mut JNIEnv, jthread, jobject);
    type Alloc = unsafe extern "system" fn(Env, *mut JNIEnv, jthread, jobject, jclass, jlong);
    slot!(vm_start, event::VM_START, vm_start as WithJni);
    slot!(vm_init, event::VM_INIT, vm_init as Thread);
    slot!(vm_death, event::VM_DEATH, vm_death as WithJni);
    slot!(
        class_file_load_hook,
        event::CLASS_FILE_LOAD_HOOK,
        class_file_load_hook as ClassFileLoadHookFn
    );
    slot!(
        class_load,
        event::CLASS_LOAD,
        class_load as unsafe extern "system" fn(Env, *mut JNIEnv, jthread, jclass)
    );
    slot!(
        class_prepare,
        event::CLASS_PREPARE,
        class_prepare as unsafe extern "system" fn(Env, *mut JNIEnv, jthread, jclass)
    );
    slot!(
        compiled_method_load,
        event::COMPILED_METHOD_LOAD,
        compiled_method_load as CompiledMethodLoadFn
    );
    slot!(thread_start, event::THREAD_START, thread_start as Thread);
    slot!(thread_end, event::THREAD_END, thread_end as Thread);
    slot!(
        virtual_thread_start,
        event::VIRTUAL_THREAD_START,
        virtual_thread_start as Thread
    );
    slot!(
        virtual_thread_end,
        event::VIRTUAL_THREAD_END,
        virtual_thread_end as Thread
    );
    slot!(gc_start, event::GARBAGE_COLLECTION_START, gc_start as Plain);
    slot!(
        gc_finish,
        event::GARBAGE_COLLECTION_FINISH,
        gc_finish as Plain
    );
    slot!(
        object_free,
        event::OBJECT_FREE,
        object_free as unsafe extern "system" fn(Env, jlong)
    );
    slot!(
        data_dump_request,
        event::DATA_DUMP_REQUEST,
        data_dump_request as Plain
    );
    slot!(
        vm_object_alloc,
        event::VM_OBJECT_ALLOC,
        vm_object_alloc as Alloc
    );
    slot!(
        sampled_object_alloc,
        event::SAMPLED_OBJECT_ALLOC,
        sampled_object_alloc as Alloc
    );
    slot!(
        monitor_contended_enter,
        event::MONITOR_CONTENDED_ENTER,
        monitor_contended_enter as Object
    );
    slot!(
        monitor_contended_entered,
        event::MONITOR_CONTENDED_ENTERED,
        monitor_contended_entered as Object
    );
    slot!(
        monitor_wait,
        event::MONITOR_WAIT,
        monitor_wait as unsafe extern "system" fn(Env, *mut JNIEnv, jthread, jobject, jlong)
    );
    slot!(
        monitor_waited,
        event::MONITOR_WAITED,
        monitor_waited as unsafe extern "system" fn(Env, *mut JNIEnv, jthread, jobject, jboolean)
    );
    match jvmti.set_event_callbacks(&c) {
        0 => Ok(()),
        e => Err(format!("SetEventCallbacks failed (JVMTI error {e})")),
    }
}

type ClassFileLoadHookFn = unsafe extern "system" fn(
    Env,
    *mut JNIEnv,
    jclass,
    jobject,
    *const c_char,
    jobject,
    jint,
    *const c_uchar,
    *mut jint,
    *mut *mut c_uchar,
);

/// The JNIEnv a callback was given. SAFETY (for every caller below): JVMTI passes the environment of
/// the thread it calls on, valid for the duration of the callback.
fn jni(env: *mut JNIEnv) -> Jni {
    unsafe { Jni::from_raw(env) }
}

/// The trampoline of an event whose handler takes the thread's JNI environment and the event's other
/// arguments as they come.
macro_rules! with_jni {
    ($name:ident, $event:literal, $lost:literal, ($($arg:ident: $ty:ty),*)) => {
        unsafe extern "system" fn $name(_: Env, env: *mut JNIEnv $(, $arg: $ty)*) {
            const P: Policy = Policy::once($event, $lost);
            guard(P, (), || handlers().$name.map_or((), |h| h(jni(env) $(, $arg)*)))
        }
    };
}

/// The trampoline of an event without a JNI environment (the GC events, ObjectFree, DataDumpRequest).
macro_rules! without_jni {
    ($name:ident, $policy:expr, ($($arg:ident: $ty:ty),*)) => {
        unsafe extern "system" fn $name(_: Env $(, $arg: $ty)*) {
            const P: Policy = $policy;
            guard(P, (), || handlers().$name.map_or((), |h| h($($arg),*)))
        }
    };
}

with_jni!(vm_start, "VMStart", "nothing will be counted", ());
with_jni!(vm_init, "VMInit", "counting may not have started", (thread: jthread));
with_jni!(
    vm_death,
    "VMDeath",
    "the reports at exit may be missing",
    ()
);

#[allow(clippy::too_many_arguments)]
unsafe extern "system" fn class_file_load_hook(
    jvmti: Env,
    env: *mut JNIEnv,
    _redefined: jclass,
    _loader: jobject,
    name: *const c_char,
    _protection_domain: jobject,
    data_len: jint,
    data: *const c_uchar,
    new_data_len: *mut jint,
    new_data: *mut *mut c_uchar,
) {
    const P: Policy = Policy::once("ClassFileLoadHook", "the class loads unchanged");
    guard(P, (), || {
        let Some(h) = handlers().class_file_load_hook else {
            return;
        };
        if data.is_null() || data_len <= 0 || new_data.is_null() || new_data_len.is_null() {
            return;
        }
        // SAFETY: the VM passes a NUL-terminated internal name (or null) and `data_len` readable bytes.
        let name = if name.is_null() {
            &[][..]
        } else {
            unsafe { CStr::from_ptr(name) }.to_bytes()
        };
        let bytes = unsafe { std::slice::from_raw_parts(data, data_len as usize) };
        let env = (!env.is_null()).then(|| jni(env));
        let Some(out) = h(env, name, bytes) else {
            return;
        };
        let Ok(len) = jint::try_from(out.len()) else {
            return;
        };
        // SAFETY: the environment the VM called with.
        let jvmti = unsafe { Jvmti::from_raw(jvmti) };
        let Some(mem) = jvmti.allocate(out.len() as jlong) else {
            return;
        };
        // SAFETY: `mem` has room for `out.len()` bytes; JVMTI takes ownership of it with the new length.
        unsafe {
            std::ptr::copy_nonoverlapping(out.as_ptr(), mem, out.len());
            *new_data_len = len;
            *new_data = mem;
        }
    })
}

with_jni!(class_load, "ClassLoad", "the XML trace may miss classes", (thread: jthread, class: jclass));
with_jni!(class_prepare, "ClassPrepare", "samples in this class's methods may be unresolved", (thread: jthread, class: jclass));

type CompiledMethodLoadFn = unsafe extern "system" fn(
    Env,
    jni_sys::jmethodID,
    jint,
    *const c_void,
    jint,
    *const c_void,
    *const c_void,
);

unsafe extern "system" fn compiled_method_load(
    _: Env,
    _method: jni_sys::jmethodID,
    _code_size: jint,
    _code: *const c_void,
    _map_length: jint,
    _map: *const c_void,
    _compile_info: *const c_void,
) {
    const P: Policy = Policy::counted("CompiledMethodLoad");
    guard(P, (), || {
        handlers().compiled_method_load.map_or((), |h| h())
    })
}
with_jni!(thread_start, "ThreadStart", "thread reports may be incomplete", (thread: jthread));
with_jni!(thread_end, "ThreadEnd", "an ending thread's counts stay in its rows", (thread: jthread));
with_jni!(virtual_thread_start, "VirtualThreadStart", "thread reports may be incomplete", (thread: jthread));
with_jni!(virtual_thread_end, "VirtualThreadEnd", "thread reports may be incomplete", (thread: jthread));
// Inside a GC pause or its aftermath: a panic is counted, never printed there.
without_jni!(gc_start, Policy::counted("GarbageCollectionStart"), ());
without_jni!(gc_finish, Policy::counted("GarbageCollectionFinish"), ());
without_jni!(object_free, Policy::counted("ObjectFree"), (tag: jlong));
without_jni!(
    data_dump_request,
    Policy::once("DataDumpRequest", "no report is written on this request"),
    ()
);
with_jni!(
    vm_object_alloc,
    "VMObjectAlloc",
    "objects the VM allocates may be uncounted",
    (thread: jthread, object: jobject, class: jclass, size: jlong)
);
with_jni!(
    sampled_object_alloc,
    "SampledObjectAlloc",
    "heap samples may be missing",
    (thread: jthread, object: jobject, class: jclass, size: jlong)
);
with_jni!(
    monitor_contended_enter,
    "MonitorContendedEnter",
    "monitor reports may be incomplete",
    (thread: jthread, o: jobject)
);
with_jni!(
    monitor_contended_entered,
    "MonitorContendedEntered",
    "monitor reports may be incomplete",
    (thread: jthread, o: jobject)
);
with_jni!(
    monitor_wait,
    "MonitorWait",
    "monitor reports may be incomplete",
    (thread: jthread, o: jobject, timeout: jlong)
);

unsafe extern "system" fn monitor_waited(
    _: Env,
    env: *mut JNIEnv,
    thread: jthread,
    o: jobject,
    timed_out: jboolean,
) {
    const P: Policy = Policy::once("MonitorWaited", "monitor reports may be incomplete");
    guard(P, (), || {
        handlers()
            .monitor_waited
            .map_or((), |h| h(jni(env), thread, o, timed_out != 0))
    })
}

/// Starts `thread` (a new, unstarted java.lang.Thread) as an agent thread running `body`.
pub fn run_agent_thread(
    jvmti: Jvmti,
    thread: jthread,
    body: fn(Jni),
    priority: jint,
) -> JvmtiError {
    jvmti.run_agent_thread(thread, agent_thread_main, body as *const c_void, priority)
}

unsafe extern "system" fn agent_thread_main(_: Env, env: *mut JNIEnv, arg: *mut c_void) {
    const P: Policy = Policy::once("agent thread", "an agent thread stopped");
    guard(P, (), || {
        // SAFETY: `arg` is the `fn(Jni)` run_agent_thread passed, unchanged by the VM.
        let body: fn(Jni) = unsafe { std::mem::transmute::<*mut c_void, fn(Jni)>(arg) };
        body(jni(env))
    })
}
