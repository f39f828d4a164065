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

    fn take_array<T: Copy>(&self, e: JvmtiError, array: *mut T, count: jint) -> Vec<T> {
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
