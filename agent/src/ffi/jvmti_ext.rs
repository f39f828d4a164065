//! The JVMTI calls, events and capabilities of the thread and monitor profiler (threads.rs, monitors.rs,
//! deadlocks.rs, xml_trace.rs), bound like those of jvmti.rs: slot numbers and layouts of jvmti.h.

use std::ffi::{c_char, c_void, CStr};
use std::ptr;

use jni_sys::{jboolean, jclass, jint, jlong, jobject, JNIEnv};

use crate::jvmti::{call, jthread, Env, FrameInfo, Jvmti, JvmtiError, ERROR_NONE};

// One list of event numbers and capability bits for the whole agent (jvmti.rs).
pub use crate::jvmti::{capability, event};

/// `JVMTI_THREAD_STATE_*` bits the profiler reads.
pub mod state {
    pub const ALIVE: i32 = 0x0001;
    pub const TERMINATED: i32 = 0x0002;
    pub const RUNNABLE: i32 = 0x0004;
    pub const WAITING_INDEFINITELY: i32 = 0x0010;
    pub const WAITING_WITH_TIMEOUT: i32 = 0x0020;
    pub const SLEEPING: i32 = 0x0040;
    pub const WAITING: i32 = 0x0080;
    pub const IN_OBJECT_WAIT: i32 = 0x0100;
    pub const PARKED: i32 = 0x0200;
    pub const BLOCKED_ON_MONITOR_ENTER: i32 = 0x0400;
}

pub type ThreadFn = unsafe extern "system" fn(Env, *mut JNIEnv, jthread);
pub type ClassFn = unsafe extern "system" fn(Env, *mut JNIEnv, jthread, jclass);
pub type MonitorFn = unsafe extern "system" fn(Env, *mut JNIEnv, jthread, jobject);
pub type MonitorWaitFn = unsafe extern "system" fn(Env, *mut JNIEnv, jthread, jobject, jlong);
pub type MonitorWaitedFn = unsafe extern "system" fn(Env, *mut JNIEnv, jthread, jobject, jboolean);
pub type DataDumpFn = unsafe extern "system" fn(Env);
pub type ObjectFreeFn = unsafe extern "system" fn(Env, jlong);
pub type AgentThreadFn = unsafe extern "system" fn(Env, *mut JNIEnv, *mut c_void);

/// `jvmtiThreadInfo`.
#[repr(C)]
struct RawThreadInfo {
    name: *mut c_char,
    priority: jint,
    is_daemon: jboolean,
    thread_group: jobject,
    context_class_loader: jobject,
}

/// `jvmtiThreadGroupInfo`.
#[repr(C)]
struct RawGroupInfo {
    parent: jobject,
    name: *mut c_char,
    max_priority: jint,
    is_daemon: jboolean,
}

/// `jvmtiMonitorStackDepthInfo`.
#[repr(C)]
#[derive(Clone, Copy)]
struct RawMonitorDepth {
    monitor: jobject,
    stack_depth: jint,
}

/// `jvmtiMonitorUsage`.
#[repr(C)]
struct RawMonitorUsage {
    owner: jthread,
    entry_count: jint,
    waiter_count: jint,
    waiters: *mut jthread,
    notify_waiter_count: jint,
    notify_waiters: *mut jthread,
}

pub struct ThreadInfo {
    pub name: String,
    pub daemon: bool,
    /// A local reference to the thread's group (null for a terminated thread).
    pub group: jobject,
}

impl Jvmti {
    /// Enables or disables one event for every thread.
    pub fn set_event(&self, event: u32, on: bool) -> JvmtiError {
        self.set_event_notification_mode(event, if on { 1 } else { 0 })
    }

    /// Every live platform thread (local references).
    pub fn all_threads(&self) -> Vec<jthread> {
        let mut count: jint = 0;
        let mut threads: *mut jthread = ptr::null_mut();
        let e = call!(
            self,
            4,
            fn(*mut jint, *mut *mut jthread),
            &mut count,
            &mut threads
        );
        self.take_array(e, threads, count)
    }

    pub fn thread_info(&self, thread: jthread) -> Option<ThreadInfo> {
        let mut info = RawThreadInfo {
            name: ptr::null_mut(),
            priority: 0,
            is_daemon: 0,
            thread_group: ptr::null_mut(),
            context_class_loader: ptr::null_mut(),
        };
        let e = call!(self, 9, fn(jthread, *mut RawThreadInfo), thread, &mut info);
        if e != ERROR_NONE {
            return None;
        }
        // The context class loader is a local reference like the group; the caller's frame frees both.
        Some(ThreadInfo {
            name: self.take_cstring(info.name).unwrap_or_default(),
            daemon: info.is_daemon != 0,
            group: info.thread_group,
        })
    }

    /// (parent group, name) of a thread group; the parent is a local reference or null.
    pub fn thread_group_info(&self, group: jobject) -> Option<(jobject, String)> {
        let mut info = RawGroupInfo {
            parent: ptr::null_mut(),
            name: ptr::null_mut(),
            max_priority: 0,
            is_daemon: 0,
        };
        let e = call!(self, 14, fn(jobject, *mut RawGroupInfo), group, &mut info);
        (e == ERROR_NONE).then(|| {
            (
                info.parent,
                self.take_cstring(info.name).unwrap_or_default(),
            )
        })
    }

    pub fn thread_state(&self, thread: jthread) -> jint {
        let mut state: jint = 0;
        let e = call!(self, 17, fn(jthread, *mut jint), thread, &mut state);
        if e == ERROR_NONE {
            state
        } else {
            0
        }
    }

    /// The monitor `thread` is blocked on entering (or re-entering after `wait`), if any.
    pub fn contended_monitor(&self, thread: jthread) -> Option<jobject> {
        let mut monitor: jobject = ptr::null_mut();
        let e = call!(self, 11, fn(jthread, *mut jobject), thread, &mut monitor);
        (e == ERROR_NONE && !monitor.is_null()).then_some(monitor)
    }

    /// The monitors `thread` owns, each with the depth of the frame that locked it (-1: not known, e.g.
    /// locked by JNI).
    pub fn owned_monitors(&self, thread: jthread) -> Vec<(jobject, jint)> {
        let mut count: jint = 0;
        let mut info: *mut RawMonitorDepth = ptr::null_mut();
        let e = call!(
            self,
            153,
            fn(jthread, *mut jint, *mut *mut RawMonitorDepth),
            thread,
            &mut count,
            &mut info
        );
        self.take_array(e, info, count)
            .into_iter()
            .map(|m| (m.monitor, m.stack_depth))
            .collect()
    }

    /// The owner of an object's monitor (a local reference), if it has one. A VM operation: slow.
    pub fn monitor_owner(&self, object: jobject) -> Option<jthread> {
        let mut usage = RawMonitorUsage {
            owner: ptr::null_mut(),
            entry_count: 0,
            waiter_count: 0,
            waiters: ptr::null_mut(),
            notify_waiter_count: 0,
            notify_waiters: ptr::null_mut(),
        };
        let e = call!(
            self,
            59,
            fn(jobject, *mut RawMonitorUsage),
            object,
            &mut usage
        );
        if e != ERROR_NONE {
            return None;
        }
        for array in [usage.waiters, usage.notify_waiters] {
            if !array.is_null() {
                self.deallocate(array.cast());
            }
        }
        (!usage.owner.is_null()).then_some(usage.owner)
    }

    /// The VM's hash code of an object (its identity hash on HotSpot); usable in any callback.
    pub fn object_hash(&self, object: jobject) -> jint {
        let mut hash: jint = 0;
        call!(self, 58, fn(jobject, *mut jint), object, &mut hash);
        hash
    }

    /// Starts `thread` (a new, unstarted java.lang.Thread) as an agent thread running `f(arg)`.
    pub(crate) fn run_agent_thread(
        &self,
        thread: jthread,
        f: AgentThreadFn,
        arg: *const c_void,
        priority: jint,
    ) -> JvmtiError {
        call!(
            self,
            12,
            fn(jthread, AgentThreadFn, *const c_void, jint),
            thread,
            f,
            arg,
            priority
        )
    }

    /// Frames of `thread` from the top, into `frames`; returns how many were filled.
    pub fn thread_stack(&self, thread: jthread, frames: &mut [FrameInfo]) -> usize {
        self.stack_of(thread, 0, frames)
    }

    pub fn current_thread_cpu_time(&self) -> Option<jlong> {
        let mut nanos: jlong = 0;
        let e = call!(self, 135, fn(*mut jlong), &mut nanos);
        (e == ERROR_NONE).then_some(nanos)
    }

    pub fn thread_cpu_time(&self, thread: jthread) -> Option<jlong> {
        let mut nanos: jlong = 0;
        let e = call!(self, 137, fn(jthread, *mut jlong), thread, &mut nanos);
        (e == ERROR_NONE).then_some(nanos)
    }

    pub(super) fn take_array<T: Copy>(&self, e: JvmtiError, array: *mut T, count: jint) -> Vec<T> {
        if e != ERROR_NONE || array.is_null() {
            return Vec::new();
        }
        // SAFETY: JVMTI returned `count` elements at `array`, allocated with Allocate.
        let v = unsafe { std::slice::from_raw_parts(array, count.max(0) as usize) }.to_vec();
        self.deallocate(array.cast());
        v
    }

    fn take_cstring(&self, s: *mut c_char) -> Option<String> {
        if s.is_null() {
            return None;
        }
        // SAFETY: a NUL-terminated string JVMTI allocated; freed after copying.
        let text = unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned();
        self.deallocate(s.cast());
        Some(text)
    }
}

// ---------------------------------------------------------------------------------------------------
// The heap dump (heap_dump.rs): classes and their fields, all threads' stacks, objects by tag, the
// reference walk, and environments of its own (tags are per environment, so a dump's ids never touch
// the live tracker's or the trace's tags).

/// `JVMTI_HEAP_REFERENCE_*`: what a FollowReferences edge is.
pub mod reference {
    pub const CLASS: i32 = 1;
    pub const FIELD: i32 = 2;
    pub const ARRAY_ELEMENT: i32 = 3;
    pub const STATIC_FIELD: i32 = 8;
    pub const JNI_GLOBAL: i32 = 21;
    pub const SYSTEM_CLASS: i32 = 22;
    pub const MONITOR: i32 = 23;
    pub const STACK_LOCAL: i32 = 24;
    pub const JNI_LOCAL: i32 = 25;
    pub const THREAD: i32 = 26;
    pub const OTHER: i32 = 27;
}

/// `JVMTI_CLASS_STATUS_PREPARED`: fields can be listed.
pub const CLASS_STATUS_PREPARED: jint = 2;
/// `JVMTI_ACC_STATIC` as GetFieldModifiers returns it.
pub const ACC_STATIC: jint = 0x0008;

/// One FollowReferences edge, as the heap reference callback describes it.
pub struct HeapReference {
    pub kind: jint,
    /// Field, array element or constant-pool index (FIELD, STATIC_FIELD, ARRAY_ELEMENT, CONSTANT_POOL).
    pub index: jint,
    /// STACK_LOCAL and JNI_LOCAL: the tag of the thread and the frame's depth.
    pub thread_tag: jlong,
    pub depth: jint,
    /// The referee's class tag, size and, for an array, length (-1 otherwise).
    pub class_tag: jlong,
    pub size: jlong,
    pub length: jint,
    /// The referrer's tag; None for a root.
    pub referrer_tag: Option<jlong>,
}

/// What a heap walk hands to safe code. Runs inside the walk (on the VM thread, the world stopped):
/// no JNI, no JVMTI.
pub trait HeapVisitor {
    /// An edge or root; returns the tag the referee is to have.
    fn reference(&mut self, r: &HeapReference, tag: jlong) -> jlong;
    /// A primitive field of an object (FIELD) or class (STATIC_FIELD): `jvmti_type` is the JVMTI
    /// primitive type character (`I`, `J`...), `bits` the value in the low bytes.
    fn primitive_field(
        &mut self,
        kind: jint,
        index: jint,
        object_tag: jlong,
        jvmti_type: u8,
        bits: u64,
    );
    /// A primitive array: its elements in the VM's byte order.
    fn primitive_array(&mut self, tag: jlong, count: jint, jvmti_type: u8, native: &[u8]);
    /// True to stop the walk.
    fn abort(&self) -> bool;
}

/// `jvmtiHeapReferenceInfo` (a union; its largest member is eight jlongs).
#[repr(C)]
#[derive(Clone, Copy)]
struct RawReferenceInfo {
    words: [jlong; 8],
}

type ReferenceFn = unsafe extern "system" fn(
    jint,
    *const RawReferenceInfo,
    jlong,
    jlong,
    jlong,
    *mut jlong,
    *mut jlong,
    jint,
    *mut c_void,
) -> jint;
type PrimitiveFieldFn = unsafe extern "system" fn(
    jint,
    *const RawReferenceInfo,
    jlong,
    *mut jlong,
    jni_sys::jvalue,
    jint,
    *mut c_void,
) -> jint;
type ArrayPrimitiveFn = unsafe extern "system" fn(
    jlong,
    jlong,
    *mut jlong,
    jint,
    jint,
    *const c_void,
    *mut c_void,
) -> jint;

/// `jvmtiHeapCallbacks`: iteration, reference, primitive field, array primitive, string primitive,
/// then ten reserved slots.
#[repr(C)]
struct WalkCallbacks {
    iteration: Option<unsafe extern "system" fn()>,
    reference: Option<ReferenceFn>,
    primitive_field: Option<PrimitiveFieldFn>,
    array_primitive: Option<ArrayPrimitiveFn>,
    rest: [Option<unsafe extern "system" fn()>; 11],
}

const VISIT_OBJECTS: jint = 0x100;
const VISIT_ABORT: jint = 0x8000;

/// Bytes of one element of a JVMTI primitive type.
fn primitive_size(t: u8) -> usize {
    match t {
        b'Z' | b'B' => 1,
        b'C' | b'S' => 2,
        b'I' | b'F' => 4,
        b'J' | b'D' => 8,
        _ => 0,
    }
}

/// `jvmtiStackInfo`.
#[repr(C)]
#[derive(Clone, Copy)]
struct RawStackInfo {
    thread: jthread,
    state: jint,
    frames: *mut FrameInfo,
    frame_count: jint,
}

impl Jvmti {
    /// Every loaded class (local references), array classes included.
    pub fn loaded_classes(&self) -> Vec<jclass> {
        let mut count: jint = 0;
        let mut classes: *mut jclass = ptr::null_mut();
        let e = call!(
            self,
            78,
            fn(*mut jint, *mut *mut jclass),
            &mut count,
            &mut classes
        );
        self.take_array(e, classes, count)
    }

    /// The methods of a prepared class; asking is what makes HotSpot create their jmethodIDs, which
    /// AsyncGetCallTrace can only report for methods that have one. None on error (class not prepared).
    pub fn class_methods(&self, class: jclass) -> Option<Vec<jni_sys::jmethodID>> {
        let mut count: jint = 0;
        let mut methods: *mut jni_sys::jmethodID = ptr::null_mut();
        let e = call!(
            self,
            52,
            fn(jclass, *mut jint, *mut *mut jni_sys::jmethodID),
            class,
            &mut count,
            &mut methods
        );
        (e == ERROR_NONE).then(|| self.take_array(e, methods, count))
    }

    pub fn class_status(&self, class: jclass) -> jint {
        let mut status: jint = 0;
        call!(self, 49, fn(jclass, *mut jint), class, &mut status);
        status
    }

    /// The fields a class declares, in the order JVMTI numbers them; None if it cannot list them.
    pub fn class_fields(&self, class: jclass) -> Option<Vec<jni_sys::jfieldID>> {
        let mut count: jint = 0;
        let mut fields: *mut jni_sys::jfieldID = ptr::null_mut();
        let e = call!(
            self,
            53,
            fn(jclass, *mut jint, *mut *mut jni_sys::jfieldID),
            class,
            &mut count,
            &mut fields
        );
        (e == ERROR_NONE).then(|| self.take_array(e, fields, count))
    }

    /// The interfaces a class or interface declares directly (local references).
    pub fn implemented_interfaces(&self, class: jclass) -> Vec<jclass> {
        let mut count: jint = 0;
        let mut list: *mut jclass = ptr::null_mut();
        let e = call!(
            self,
            54,
            fn(jclass, *mut jint, *mut *mut jclass),
            class,
            &mut count,
            &mut list
        );
        self.take_array(e, list, count)
    }

    /// A class's defining loader (a local reference); null for the boot loader.
    pub fn class_loader(&self, class: jclass) -> jobject {
        let mut loader: jobject = ptr::null_mut();
        call!(self, 57, fn(jclass, *mut jobject), class, &mut loader);
        loader
    }

    /// (name, signature) of a field.
    pub fn field_name(&self, class: jclass, field: jni_sys::jfieldID) -> Option<(String, String)> {
        let (mut name, mut sig): (*mut c_char, *mut c_char) = (ptr::null_mut(), ptr::null_mut());
        let e = call!(
            self,
            60,
            fn(jclass, jni_sys::jfieldID, *mut *mut c_char, *mut *mut c_char, *mut *mut c_char),
            class,
            field,
            &mut name,
            &mut sig,
            ptr::null_mut()
        );
        if e != ERROR_NONE {
            return None;
        }
        Some((self.take_cstring(name)?, self.take_cstring(sig)?))
    }

    pub fn field_modifiers(&self, class: jclass, field: jni_sys::jfieldID) -> jint {
        let mut m: jint = 0;
        call!(
            self,
            62,
            fn(jclass, jni_sys::jfieldID, *mut jint),
            class,
            field,
            &mut m
        );
        m
    }

    /// Every live platform thread with up to `max_frames` frames of its stack, from the top (one
    /// consistent snapshot: the VM takes them at one safepoint). Threads are local references.
    pub fn all_stack_traces(&self, max_frames: jint) -> Vec<(jthread, Vec<FrameInfo>)> {
        self.all_stack_traces_and_states(max_frames)
            .into_iter()
            .map(|(t, _, f)| (t, f))
            .collect()
    }

    /// As [`Jvmti::all_stack_traces`], with each thread's JVMTI state bits (`JVMTI_THREAD_STATE_*`).
    pub fn all_stack_traces_and_states(
        &self,
        max_frames: jint,
    ) -> Vec<(jthread, jint, Vec<FrameInfo>)> {
        let mut info: *mut RawStackInfo = ptr::null_mut();
        let mut count: jint = 0;
        let e = call!(
            self,
            100,
            fn(jint, *mut *mut RawStackInfo, *mut jint),
            max_frames,
            &mut info,
            &mut count
        );
        if e != ERROR_NONE || info.is_null() {
            return Vec::new();
        }
        // SAFETY: JVMTI returned `count` stack infos at `info`, each with `frame_count` frames, all in
        // the one block that is freed below.
        let out = unsafe { std::slice::from_raw_parts(info, count.max(0) as usize) }
            .iter()
            .map(|s| {
                let frames = if s.frames.is_null() {
                    Vec::new()
                } else {
                    // SAFETY: as above.
                    unsafe { std::slice::from_raw_parts(s.frames, s.frame_count.max(0) as usize) }
                        .to_vec()
                };
                (s.thread, s.state, frames)
            })
            .collect();
        self.deallocate(info.cast());
        out
    }

    /// The objects that have one of `tags`, with their tags (local references).
    pub fn objects_with_tags(&self, tags: &[jlong]) -> Vec<(jobject, jlong)> {
        let mut count: jint = 0;
        let mut objects: *mut jobject = ptr::null_mut();
        let mut found: *mut jlong = ptr::null_mut();
        let e = call!(
            self,
            114,
            fn(jint, *const jlong, *mut jint, *mut *mut jobject, *mut *mut jlong),
            tags.len() as jint,
            tags.as_ptr(),
            &mut count,
            &mut objects,
            &mut found
        );
        let objects = self.take_array(e, objects, count);
        let found = self.take_array(e, found, count);
        objects.into_iter().zip(found).collect()
    }

    /// A new environment of its own for a heap walk, with `can_tag_objects`: its tags are its own, and
    /// `dispose` drops them all at once.
    pub fn for_heap_walk(vm: &super::java_vm::JavaVm) -> Result<Jvmti, String> {
        let env = vm.jvmti()?;
        let caps = super::jvmti::Capabilities::default().with(capability::TAG_OBJECTS);
        if env.add_capabilities(&caps) != ERROR_NONE {
            env.dispose();
            return Err("the JVM refuses can_tag_objects to a new JVMTI environment".into());
        }
        Ok(env)
    }

    /// DisposeEnvironment: the environment's tags and capabilities go with it.
    pub fn dispose(&self) {
        call!(self, 127, fn());
    }

    /// FollowReferences from the heap roots over every reachable object, reporting to `visitor`.
    pub fn follow_references(&self, visitor: &mut dyn HeapVisitor) -> JvmtiError {
        unsafe extern "system" fn on_reference(
            kind: jint,
            info: *const RawReferenceInfo,
            class_tag: jlong,
            _referrer_class_tag: jlong,
            size: jlong,
            tag_ptr: *mut jlong,
            referrer_tag_ptr: *mut jlong,
            length: jint,
            user: *mut c_void,
        ) -> jint {
            const P: super::guard::Policy =
                super::guard::Policy::once("FollowReferences", "the heap dump is not written");
            super::guard::guard(P, VISIT_ABORT, || {
                // SAFETY: `user` is the `&mut dyn HeapVisitor` passed below, alive during the walk.
                let visitor = unsafe { &mut **(user as *mut &mut dyn HeapVisitor) };
                // SAFETY: the VM passes a valid info block (or null) and tag slots for this callback.
                let words = if info.is_null() {
                    [0; 8]
                } else {
                    unsafe { (*info).words }
                };
                let (index, thread_tag, depth) = match kind {
                    reference::STACK_LOCAL | reference::JNI_LOCAL => {
                        (-1, words[0], words[2] as jint)
                    }
                    _ => (words[0] as jint, 0, -1),
                };
                let r = HeapReference {
                    kind,
                    index,
                    thread_tag,
                    depth,
                    class_tag,
                    size,
                    length,
                    // SAFETY: null for a root, else the referrer's tag slot.
                    referrer_tag: (!referrer_tag_ptr.is_null())
                        .then(|| unsafe { *referrer_tag_ptr }),
                };
                // SAFETY: the referee's tag slot.
                let tag = visitor.reference(&r, unsafe { *tag_ptr });
                unsafe { *tag_ptr = tag };
                if visitor.abort() {
                    VISIT_ABORT
                } else {
                    VISIT_OBJECTS
                }
            })
        }
        unsafe extern "system" fn on_primitive_field(
            kind: jint,
            info: *const RawReferenceInfo,
            _class_tag: jlong,
            tag_ptr: *mut jlong,
            value: jni_sys::jvalue,
            value_type: jint,
            user: *mut c_void,
        ) -> jint {
            const P: super::guard::Policy =
                super::guard::Policy::once("FollowReferences", "the heap dump is not written");
            super::guard::guard(P, VISIT_ABORT, || {
                // SAFETY: as in on_reference.
                let visitor = unsafe { &mut **(user as *mut &mut dyn HeapVisitor) };
                let index = if info.is_null() {
                    -1
                } else {
                    unsafe { (*info).words[0] as jint }
                };
                let t = value_type as u8;
                // SAFETY: the member read is the one `value_type` names: the others' bytes may be
                // anything.
                let bits = unsafe {
                    match t {
                        b'Z' => value.z as u64,
                        b'B' => value.b as u8 as u64,
                        b'C' => value.c as u64,
                        b'S' => value.s as u16 as u64,
                        b'I' => value.i as u32 as u64,
                        b'F' => value.f.to_bits() as u64,
                        b'J' => value.j as u64,
                        b'D' => value.d.to_bits(),
                        _ => 0,
                    }
                };
                // SAFETY: the object's tag slot.
                visitor.primitive_field(kind, index, unsafe { *tag_ptr }, t, bits);
                if visitor.abort() {
                    VISIT_ABORT
                } else {
                    0
                }
            })
        }
        unsafe extern "system" fn on_array(
            _class_tag: jlong,
            _size: jlong,
            tag_ptr: *mut jlong,
            count: jint,
            element_type: jint,
            elements: *const c_void,
            user: *mut c_void,
        ) -> jint {
            const P: super::guard::Policy =
                super::guard::Policy::once("FollowReferences", "the heap dump is not written");
            super::guard::guard(P, VISIT_ABORT, || {
                // SAFETY: as in on_reference.
                let visitor = unsafe { &mut **(user as *mut &mut dyn HeapVisitor) };
                let t = element_type as u8;
                let len = count.max(0) as usize * primitive_size(t);
                let native = if elements.is_null() || len == 0 {
                    &[][..]
                } else {
                    // SAFETY: the VM passes `count` elements of `element_type` at `elements`.
                    unsafe { std::slice::from_raw_parts(elements as *const u8, len) }
                };
                // SAFETY: the array's tag slot.
                visitor.primitive_array(unsafe { *tag_ptr }, count, t, native);
                if visitor.abort() {
                    VISIT_ABORT
                } else {
                    0
                }
            })
        }
        let callbacks = WalkCallbacks {
            iteration: None,
            reference: Some(on_reference),
            primitive_field: Some(on_primitive_field),
            array_primitive: Some(on_array),
            rest: [None; 11],
        };
        let mut visitor: &mut dyn HeapVisitor = visitor;
        call!(
            self,
            115,
            fn(jint, jclass, jobject, *const WalkCallbacks, *mut c_void),
            0,
            ptr::null_mut(),
            ptr::null_mut(),
            &callbacks,
            &mut visitor as *mut _ as *mut c_void
        )
    }
}
