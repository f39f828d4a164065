//! The slice of JVMTI the agent uses, bound by hand: the function table is indexed by the slot numbers of
//! the JVMTI specification (jvmti.h numbers them from 1), and each function gets a typed wrapper.

use std::ffi::{c_char, c_uchar, c_void, CStr};
use std::ptr;

use jni_sys::{jclass, jint, jlong, jmethodID, jobject, JNIEnv};

/// JNI spells it in lower case; kept so signatures read like jvmti.h.
#[allow(non_camel_case_types)]
pub type jthread = jobject;

pub type JvmtiError = u32;
pub const ERROR_NONE: JvmtiError = 0;
pub const VERSION_1_2: jint = 0x3001_0200;

pub type Location = jlong;

pub const PHASE_LIVE: jint = 4;

pub const ENABLE: jint = 1;

pub mod event {
    pub const VM_INIT: u32 = 50;
    pub const VM_DEATH: u32 = 51;
    pub const THREAD_START: u32 = 52;
    pub const THREAD_END: u32 = 53;
    pub const CLASS_FILE_LOAD_HOOK: u32 = 54;
    pub const CLASS_LOAD: u32 = 55;
    pub const CLASS_PREPARE: u32 = 56;
    pub const VM_START: u32 = 57;
    pub const COMPILED_METHOD_LOAD: u32 = 68;
    pub const DATA_DUMP_REQUEST: u32 = 71;
    pub const MONITOR_WAIT: u32 = 73;
    pub const MONITOR_WAITED: u32 = 74;
    pub const MONITOR_CONTENDED_ENTER: u32 = 75;
    pub const MONITOR_CONTENDED_ENTERED: u32 = 76;
    pub const GARBAGE_COLLECTION_START: u32 = 81;
    pub const GARBAGE_COLLECTION_FINISH: u32 = 82;
    pub const OBJECT_FREE: u32 = 83;
    pub const VM_OBJECT_ALLOC: u32 = 84;
    pub const SAMPLED_OBJECT_ALLOC: u32 = 86;
    pub const VIRTUAL_THREAD_START: u32 = 87;
    pub const VIRTUAL_THREAD_END: u32 = 88;
}

/// Capability bits, in the order of `jvmtiCapabilities` (bit 0 of the first word first).
pub mod capability {
    pub const TAG_OBJECTS: u32 = 0;
    pub const GET_BYTECODES: u32 = 3;
    pub const GET_OWNED_MONITOR_INFO: u32 = 5;
    pub const GET_CURRENT_CONTENDED_MONITOR: u32 = 6;
    pub const GET_MONITOR_INFO: u32 = 7;
    pub const GET_SOURCE_FILE_NAME: u32 = 11;
    pub const GET_LINE_NUMBERS: u32 = 12;
    pub const GET_CURRENT_THREAD_CPU_TIME: u32 = 22;
    pub const GET_THREAD_CPU_TIME: u32 = 23;
    pub const GENERATE_ALL_CLASS_HOOK_EVENTS: u32 = 26;
    pub const GENERATE_COMPILED_METHOD_LOAD_EVENTS: u32 = 27;
    pub const GENERATE_MONITOR_EVENTS: u32 = 28;
    pub const GENERATE_VM_OBJECT_ALLOC_EVENTS: u32 = 29;
    pub const GENERATE_GARBAGE_COLLECTION_EVENTS: u32 = 31;
    pub const GENERATE_OBJECT_FREE_EVENTS: u32 = 32;
    pub const GET_OWNED_MONITOR_STACK_DEPTH_INFO: u32 = 34;
    pub const GET_CONSTANT_POOL: u32 = 35;
    pub const RETRANSFORM_CLASSES: u32 = 37;
    pub const GENERATE_EARLY_VMSTART: u32 = 41;
    pub const GENERATE_EARLY_CLASS_HOOK_EVENTS: u32 = 42;
    pub const GENERATE_SAMPLED_OBJECT_ALLOC_EVENTS: u32 = 43;
    pub const SUPPORT_VIRTUAL_THREADS: u32 = 44;

    pub fn name(bit: u32) -> &'static str {
        match bit {
            TAG_OBJECTS => "can_tag_objects",
            GET_BYTECODES => "can_get_bytecodes",
            GET_OWNED_MONITOR_INFO => "can_get_owned_monitor_info",
            GET_CURRENT_CONTENDED_MONITOR => "can_get_current_contended_monitor",
            GET_MONITOR_INFO => "can_get_monitor_info",
            GET_SOURCE_FILE_NAME => "can_get_source_file_name",
            GET_LINE_NUMBERS => "can_get_line_numbers",
            GET_CURRENT_THREAD_CPU_TIME => "can_get_current_thread_cpu_time",
            GET_THREAD_CPU_TIME => "can_get_thread_cpu_time",
            GENERATE_ALL_CLASS_HOOK_EVENTS => "can_generate_all_class_hook_events",
            GENERATE_COMPILED_METHOD_LOAD_EVENTS => "can_generate_compiled_method_load_events",
            GENERATE_MONITOR_EVENTS => "can_generate_monitor_events",
            GENERATE_VM_OBJECT_ALLOC_EVENTS => "can_generate_vm_object_alloc_events",
            GENERATE_GARBAGE_COLLECTION_EVENTS => "can_generate_garbage_collection_events",
            GENERATE_OBJECT_FREE_EVENTS => "can_generate_object_free_events",
            GET_OWNED_MONITOR_STACK_DEPTH_INFO => "can_get_owned_monitor_stack_depth_info",
            GET_CONSTANT_POOL => "can_get_constant_pool",
            RETRANSFORM_CLASSES => "can_retransform_classes",
            GENERATE_EARLY_VMSTART => "can_generate_early_vmstart",
            GENERATE_EARLY_CLASS_HOOK_EVENTS => "can_generate_early_class_hook_events",
            GENERATE_SAMPLED_OBJECT_ALLOC_EVENTS => "can_generate_sampled_object_alloc_events",
            SUPPORT_VIRTUAL_THREADS => "can_support_virtual_threads",
            _ => "capability",
        }
    }
}

#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct Capabilities {
    bits: [u32; 4],
}

impl Capabilities {
    pub fn with(mut self, bit: u32) -> Self {
        self.bits[bit as usize / 32] |= 1 << (bit % 32);
        self
    }
    pub fn has(&self, bit: u32) -> bool {
        self.bits[bit as usize / 32] & (1 << (bit % 32)) != 0
    }
}

/// `JVMTI_HEAP_FILTER_UNTAGGED`: skip objects without a tag.
const HEAP_FILTER_UNTAGGED: jint = 0x8;

/// Which objects [`Jvmti::retag_heap`] visits.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum HeapObjects {
    /// Those without a tag (`JVMTI_HEAP_FILTER_TAGGED` leaves the tagged ones out).
    Untagged,
    /// Those with a tag.
    Tagged,
}

type HeapIterationFn =
    unsafe extern "system" fn(jlong, jlong, *mut jlong, jint, *mut c_void) -> jint;

/// `jvmtiHeapCallbacks`: the heap-iteration callback first, then fourteen the agent leaves empty.
#[repr(C)]
struct HeapCallbacks {
    slots: [Option<HeapIterationFn>; 15],
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct FrameInfo {
    pub method: jmethodID,
    pub location: Location,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct LineNumberEntry {
    pub start_location: Location,
    pub line_number: jint,
}

pub type Env = *mut *const *const c_void;

pub type VmInitFn = unsafe extern "system" fn(Env, *mut JNIEnv, jthread);
pub type VmDeathFn = unsafe extern "system" fn(Env, *mut JNIEnv);
pub type VmStartFn = unsafe extern "system" fn(Env, *mut JNIEnv);
pub type ClassFileLoadHookFn = unsafe extern "system" fn(
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
pub type GcFn = unsafe extern "system" fn(Env);
pub type ObjectFreeFn = unsafe extern "system" fn(Env, jlong);
pub type VmObjectAllocFn =
    unsafe extern "system" fn(Env, *mut JNIEnv, jthread, jobject, jclass, jlong);

/// `jvmtiEventCallbacks`: one slot per event number from 50 (VM_INIT) to 88 (VIRTUAL_THREAD_END, JDK 21+).
/// Older VMs copy only the slots they know (SetEventCallbacks takes the size).
#[repr(C)]
pub struct EventCallbacks {
    slots: [Option<unsafe extern "system" fn()>; 39],
}

impl Default for EventCallbacks {
    fn default() -> Self {
        EventCallbacks { slots: [None; 39] }
    }
}

impl EventCallbacks {
    /// Installs `f` for `event`. `F` must be the callback type JVMTI defines for that event.
    pub fn set<F: Copy>(&mut self, event: u32, f: F) {
        assert_eq!(std::mem::size_of::<F>(), std::mem::size_of::<usize>());
        // SAFETY: every callback is a plain function pointer of the same size; JVMTI calls it with the
        // signature of its event, which the caller passes as F.
        self.slots[(event - 50) as usize] =
            Some(unsafe { std::mem::transmute_copy::<F, unsafe extern "system" fn()>(&f) });
    }
}

/// A JVMTI environment. Copyable: it is only a pointer, valid for the life of the VM.
#[derive(Clone, Copy)]
pub struct Jvmti(pub(in crate::ffi) Env);

// SAFETY: a jvmtiEnv may be used from any thread (JVMTI specification, "Environment").
unsafe impl Send for Jvmti {}
unsafe impl Sync for Jvmti {}

macro_rules! call {
    ($self:ident, $slot:expr, fn($($t:ty),*) $(, $arg:expr)*) => {{
        // SAFETY: slot numbers and signatures follow the JVMTI specification (jvmti.h).
        unsafe {
            let table = *$self.0;
            let f: unsafe extern "system" fn(Env $(, $t)*) -> JvmtiError =
                std::mem::transmute(*table.add($slot - 1));
            f($self.0 $(, $arg)*)
        }
    }};
}

// The thread and monitor profiler's calls live in jvmti_ext.rs.
pub(crate) use call;

impl Jvmti {
    /// # Safety
    /// `env` is a JVMTI environment the VM handed out (GetEnv, or an event's first argument).
    pub(crate) unsafe fn from_raw(env: Env) -> Jvmti {
        Jvmti(env)
    }

    pub fn set_event_notification_mode(&self, event: u32, mode: jint) -> JvmtiError {
        call!(
            self,
            2,
            fn(jint, u32, jthread),
            mode,
            event,
            ptr::null_mut()
        )
    }
    pub fn allocate(&self, size: jlong) -> Option<*mut u8> {
        let mut mem: *mut u8 = ptr::null_mut();
        let e = call!(self, 46, fn(jlong, *mut *mut u8), size, &mut mem);
        (e == ERROR_NONE && !mem.is_null()).then_some(mem)
    }
    pub fn deallocate(&self, mem: *mut u8) {
        call!(self, 47, fn(*mut u8), mem);
    }
    /// The class signature (`Ljava/lang/String;`), copied out of JVMTI memory.
    pub fn class_signature(&self, class: jclass) -> Option<String> {
        let mut sig: *mut c_char = ptr::null_mut();
        let e = call!(
            self,
            48,
            fn(jclass, *mut *mut c_char, *mut *mut c_char),
            class,
            &mut sig,
            ptr::null_mut()
        );
        self.take_string(e, sig)
    }
    /// Whether `class` is an array class; None if JVMTI cannot say.
    pub fn is_array_class(&self, class: jclass) -> Option<bool> {
        let mut is_array: jni_sys::jboolean = 0;
        let e = call!(
            self,
            56,
            fn(jclass, *mut jni_sys::jboolean),
            class,
            &mut is_array
        );
        (e == ERROR_NONE).then_some(is_array != 0)
    }
    pub fn source_file_name(&self, class: jclass) -> Option<String> {
        let mut name: *mut c_char = ptr::null_mut();
        let e = call!(self, 50, fn(jclass, *mut *mut c_char), class, &mut name);
        self.take_string(e, name)
    }
    /// (name, signature) of a method.
    pub fn method_name(&self, method: jmethodID) -> Option<(String, String)> {
        let (mut name, mut sig): (*mut c_char, *mut c_char) = (ptr::null_mut(), ptr::null_mut());
        let e = call!(
            self,
            64,
            fn(jmethodID, *mut *mut c_char, *mut *mut c_char, *mut *mut c_char),
            method,
            &mut name,
            &mut sig,
            ptr::null_mut()
        );
        let name = self.take_string(e, name)?;
        let sig = self.take_string(e, sig)?;
        Some((name, sig))
    }
    /// The method's access flags (`ACC_*`); 0 on error.
    pub fn method_modifiers(&self, method: jmethodID) -> jint {
        let mut m: jint = 0;
        call!(self, 66, fn(jmethodID, *mut jint), method, &mut m);
        m
    }
    pub fn method_declaring_class(&self, method: jmethodID) -> Option<jclass> {
        let mut class: jclass = ptr::null_mut();
        let e = call!(self, 65, fn(jmethodID, *mut jclass), method, &mut class);
        (e == ERROR_NONE).then_some(class)
    }
    pub fn line_number_table(&self, method: jmethodID) -> Vec<LineNumberEntry> {
        let mut count: jint = 0;
        let mut table: *mut LineNumberEntry = ptr::null_mut();
        let e = call!(
            self,
            70,
            fn(jmethodID, *mut jint, *mut *mut LineNumberEntry),
            method,
            &mut count,
            &mut table
        );
        if e != ERROR_NONE || table.is_null() {
            return Vec::new();
        }
        // SAFETY: JVMTI returned `count` entries at `table`.
        let v = unsafe { std::slice::from_raw_parts(table, count as usize) }.to_vec();
        self.deallocate(table.cast());
        v
    }
    pub fn get_phase(&self) -> jint {
        let mut phase: jint = 0;
        call!(self, 133, fn(*mut jint), &mut phase);
        phase
    }
    /// Edits slot `slot` of the VM's JNI function table: `edit` gets what the slot holds and returns what
    /// it is to hold, or None to leave the table alone. The edit is made in the copy the VM hands out and
    /// that copy goes back whole, since the VM's table can be longer than jni-sys's struct (JDK 21 added
    /// `IsVirtualThread`): a struct of jni-sys's size would hand the VM garbage for the slots past its end.
    pub fn edit_jni_function(
        &self,
        slot: usize,
        edit: impl FnOnce(*const c_void) -> Option<*const c_void>,
    ) -> Result<(), String> {
        let mut table: *mut *const c_void = ptr::null_mut();
        let e = call!(self, 121, fn(*mut *mut *const c_void), &mut table);
        if e != ERROR_NONE || table.is_null() {
            return Err(format!("GetJNIFunctionTable failed (JVMTI error {e})"));
        }
        // SAFETY: the table JVMTI allocated has every function of the VM's JNI interface, and `slot` is
        // one of JNI 1.1's; it is freed below, once the VM has copied it.
        let at = unsafe { table.add(slot) };
        // SAFETY: as above.
        let set = match edit(unsafe { at.read() }) {
            Some(function) => {
                // SAFETY: as above.
                unsafe { at.write(function) };
                call!(self, 120, fn(*const *const c_void), table as *const _)
            }
            None => ERROR_NONE,
        };
        self.deallocate(table as *mut u8);
        match set {
            ERROR_NONE => Ok(()),
            e => Err(format!("SetJNIFunctionTable failed (JVMTI error {e})")),
        }
    }
    /// Frames of the current thread from `start`, into `frames`; returns how many were filled.
    pub fn stack_trace(&self, start: jint, frames: &mut [FrameInfo]) -> usize {
        self.stack_of(ptr::null_mut(), start, frames)
    }
    /// Frames of `thread` (null: the current thread) from `start`, into `frames`; returns how many.
    pub fn stack_of(&self, thread: jthread, start: jint, frames: &mut [FrameInfo]) -> usize {
        let mut count: jint = 0;
        let e = call!(
            self,
            104,
            fn(jthread, jint, jint, *mut FrameInfo, *mut jint),
            thread,
            start,
            frames.len() as jint,
            frames.as_mut_ptr(),
            &mut count
        );
        if e == ERROR_NONE {
            count as usize
        } else {
            0
        }
    }
    pub fn object_size(&self, object: jobject) -> Option<jlong> {
        let mut size: jlong = 0;
        let e = call!(self, 154, fn(jobject, *mut jlong), object, &mut size);
        (e == ERROR_NONE).then_some(size)
    }
    pub fn set_tag(&self, object: jobject, tag: jlong) -> JvmtiError {
        call!(self, 107, fn(jobject, jlong), object, tag)
    }
    /// The object's tag; 0 when it has none (or on error).
    pub fn tag(&self, object: jobject) -> jlong {
        let mut tag: jlong = 0;
        let e = call!(self, 106, fn(jobject, *mut jlong), object, &mut tag);
        if e == ERROR_NONE {
            tag
        } else {
            0
        }
    }
    /// The heap sampler's mean interval between SampledObjectAlloc events, in bytes.
    pub fn set_heap_sampling_interval(&self, bytes: jint) -> JvmtiError {
        call!(self, 156, fn(jint), bytes)
    }
    /// The JDK's feature release (17, 25...), from the JVMTI version, which carries it since JDK 9; 0 if
    /// the VM will not say.
    pub fn jdk_feature(&self) -> u32 {
        let mut v: jint = 0;
        let e = call!(self, 88, fn(*mut jint), &mut v);
        if e == ERROR_NONE {
            ((v as u32) >> 16) & 0x0fff
        } else {
            0
        }
    }
    pub fn force_garbage_collection(&self) -> JvmtiError {
        call!(self, 108, fn())
    }
    /// Visits every tagged object in the heap: `visit(tag, size)`.
    pub fn for_each_tagged_object(&self, mut visit: impl FnMut(jlong, jlong)) -> JvmtiError {
        self.retag_heap(HeapObjects::Tagged, |_, size, tag| {
            visit(tag, size);
            tag
        })
    }

    /// Visits the objects `which` selects, in one IterateThroughHeap: `visit(class_tag, size, tag)`
    /// returns the object's new tag. It runs with the heap locked: it may touch atomics and its own
    /// state, and call no JNI or JVMTI function.
    pub fn retag_heap(
        &self,
        which: HeapObjects,
        mut visit: impl FnMut(jlong, jlong, jlong) -> jlong,
    ) -> JvmtiError {
        unsafe extern "system" fn each(
            class_tag: jlong,
            size: jlong,
            tag: *mut jlong,
            _length: jint,
            user: *mut c_void,
        ) -> jint {
            const P: super::guard::Policy =
                super::guard::Policy::once("IterateThroughHeap", "live counts may be incomplete");
            super::guard::guard(P, 0x8000, || {
                // SAFETY: `user` is the `&mut dyn FnMut` passed below, alive for the whole iteration;
                // the VM passes the visited object's tag slot, which the callback may write.
                unsafe {
                    let visit = &mut *(user as *mut &mut dyn FnMut(jlong, jlong, jlong) -> jlong);
                    *tag = visit(class_tag, size, *tag);
                }
                0
            })
        }
        let mut callbacks = HeapCallbacks { slots: [None; 15] };
        callbacks.slots[0] = Some(each);
        let mut visit: &mut dyn FnMut(jlong, jlong, jlong) -> jlong = &mut visit;
        let filter = match which {
            HeapObjects::Untagged => 0x4,
            HeapObjects::Tagged => HEAP_FILTER_UNTAGGED,
        };
        call!(
            self,
            116,
            fn(jint, jclass, *const HeapCallbacks, *mut c_void),
            filter,
            ptr::null_mut(),
            &callbacks,
            &mut visit as *mut _ as *mut c_void
        )
    }
    pub fn set_event_callbacks(&self, callbacks: &EventCallbacks) -> JvmtiError {
        call!(
            self,
            122,
            fn(*const EventCallbacks, jint),
            callbacks,
            std::mem::size_of::<EventCallbacks>() as jint
        )
    }
    pub fn potential_capabilities(&self) -> Capabilities {
        let mut caps = Capabilities::default();
        call!(self, 140, fn(*mut Capabilities), &mut caps);
        caps
    }
    pub fn add_capabilities(&self, caps: &Capabilities) -> JvmtiError {
        call!(self, 142, fn(*const Capabilities), caps)
    }

    /// Adds the capabilities `bits` in the live phase (a run-time `start`), for `what`: an error naming
    /// the first one this VM does not offer now, or AddCapabilities' refusal.
    pub fn add_live_capabilities(&self, bits: &[u32], what: &str) -> Result<(), String> {
        let potential = self.potential_capabilities();
        let mut caps = Capabilities::default();
        for &bit in bits {
            if !potential.has(bit) {
                return Err(format!(
                    "this VM does not offer the JVMTI capability {} now",
                    capability::name(bit)
                ));
            }
            caps = caps.with(bit);
        }
        if self.add_capabilities(&caps) != ERROR_NONE {
            return Err(format!("AddCapabilities failed for {what}"));
        }
        Ok(())
    }

    fn take_string(&self, e: JvmtiError, s: *mut c_char) -> Option<String> {
        if e != ERROR_NONE || s.is_null() {
            return None;
        }
        // SAFETY: JVMTI returns NUL-terminated modified UTF-8 it allocated; we free it after copying.
        let text = unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned();
        self.deallocate(s.cast());
        Some(text)
    }
}
