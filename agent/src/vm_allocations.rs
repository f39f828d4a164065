//! Objects the VM allocates without the bytecode the probes watch: `Object.clone()`,
//! `java.lang.reflect.Array.newInstance`, JNI `AllocObject`/`New*Array`, and the arrays the VM makes
//! for reflection. JVMTI reports them with VMObjectAlloc, on the allocating thread, where JNI may be
//! used; each is handed to `HeapProxy.vmAlloc`, which counts it like any other object or array.
//!
//! Two natives are left out: `Object.clone` of an array and `Array.newArray` (under `Array.newInstance(Class,
//! int)`). C2, and C1 for clone from JDK 21, make their arrays in code of their own that posts no event, so
//! the rewriter counts them after each call in the bytecode instead (`probes::made_arrays`), and counting
//! the native's event too would count them twice.
//!
//! VMObjectAlloc also fires for allocations whose constructor then runs (JNI `NewObject`, reflective
//! `newInstance` on JDK 17, exceptions the VM creates), and those already reach `Object.<init>`. So an
//! instance counts here only when the allocating call cannot run a constructor: the top frame is
//! `Object.clone`. Arrays never run a constructor and always count. Not counted, and documented in
//! docs/REPORTS.md ("What is counted"): JNI `AllocObject` from an application's own native method
//! (this rule cannot tell it from `NewObject`), and `Unsafe.allocateInstance`: JDK 17 does not report
//! it, and on JDK 25 java.lang.invoke and reflection call it and then run the constructor, so counting
//! it would count those objects twice.

use std::sync::atomic::{AtomicUsize, Ordering};

use jni_sys::{jclass, jlong, jobject, jvalue};

use crate::jni::Jni;
use crate::jvmti::{jthread, FrameInfo};
use crate::state::{agent, Agent};

/// jmethodIDs of `Object.clone` and of `HeapProxy.vmAlloc`, found at VM_INIT.
#[derive(Default)]
pub struct VmAllocators {
    clone: AtomicUsize,
    /// `java.lang.reflect.Array.newArray(Class, int)`, the native under `Array.newInstance(Class, int)`.
    new_array: AtomicUsize,
    vm_alloc: AtomicUsize,
    /// The HeapProxy class (a global reference), read without the agent's lock on every event.
    proxy: AtomicUsize,
    /// `java.lang.Cloneable` (a global reference): only its instances can come from `Object.clone`.
    cloneable: AtomicUsize,
}

/// What `HeapProxy.vmAlloc` may count, as its `what` argument: arrays, and instances allocated without a
/// constructor.
const COUNT_ARRAY: i32 = 1;
const COUNT_INSTANCE: i32 = 2;

impl VmAllocators {
    /// Looks the methods up; until this has run, VMObjectAlloc events are ignored.
    pub fn resolve(&self, jni: Jni, proxy: jclass) {
        let find = |class: &str, name: &str, sig: &str| {
            let c = jni.find_class(class)?;
            let m = jni.method(c, name, sig);
            jni.delete_local(c);
            m
        };
        let find_static = |class: &str, name: &str, sig: &str| {
            let c = jni.find_class(class)?;
            let m = jni.static_method(c, name, sig);
            jni.delete_local(c);
            m
        };
        if let Some(m) = find("java/lang/Object", "clone", "()Ljava/lang/Object;") {
            self.clone.store(m as usize, Ordering::Relaxed);
        }
        if let Some(m) = find_static(
            "java/lang/reflect/Array",
            "newArray",
            "(Ljava/lang/Class;I)Ljava/lang/Object;",
        ) {
            self.new_array.store(m as usize, Ordering::Relaxed);
        }
        if let Some(c) = jni.find_class("java/lang/Cloneable") {
            self.cloneable
                .store(jni.new_global(c) as usize, Ordering::Relaxed);
            jni.delete_local(c);
        }
        if let Some(m) = jni.static_method(proxy, "vmAlloc", "(Ljava/lang/Object;I)V") {
            self.proxy.store(proxy as usize, Ordering::Relaxed);
            self.vm_alloc.store(m as usize, Ordering::Release);
        }
    }

    /// Whether the array being reported was made by one of the two natives whose arrays the rewriter counts
    /// at their calls (`probes::made_arrays`): the top frame says.
    fn made_at_a_call(&self, a: &Agent) -> bool {
        let top = top_method(a);
        top != 0
            && (top == self.clone.load(Ordering::Relaxed)
                || top == self.new_array.load(Ordering::Relaxed))
    }

    /// Whether the object being reported was made by `Object.clone`, which runs no constructor. The
    /// stack is walked only for a Cloneable object: the VM makes others (exceptions, reflection) often.
    /// IsInstanceOf is not allowed while an exception is pending; the walk alone decides then.
    fn cloned(&self, a: &Agent, jni: Jni, object: jobject) -> bool {
        let cloneable = self.cloneable.load(Ordering::Relaxed) as jclass;
        if !cloneable.is_null()
            && !jni.exception_pending()
            && !jni.is_instance_of(object, cloneable)
        {
            return false;
        }
        top_method(a) == self.clone.load(Ordering::Relaxed)
    }
}

/// The jmethodID of the current thread's top frame (0 when it has none).
fn top_method(a: &Agent) -> usize {
    let mut top = [FrameInfo {
        method: std::ptr::null_mut(),
        location: 0,
    }];
    if a.jvmti.stack_trace(0, &mut top) == 1 {
        top[0].method as usize
    } else {
        0
    }
}

/// JVMTI VMObjectAlloc, on the allocating thread (an exception may be pending).
pub fn vm_object_alloc(jni: Jni, _thread: jthread, object: jobject, class: jclass, _size: jlong) {
    {
        let Some(a) = agent() else { return };
        // Stopped (`instr ctl PID stop alloc`): the VM's own allocations are not counted either.
        if !a.engaged.load(Ordering::Acquire)
            || !crate::switches::is_on(crate::switches::Probe::Alloc)
        {
            return;
        }
        let v = &a.vm_allocators;
        let vm_alloc = v.vm_alloc.load(Ordering::Acquire);
        if vm_alloc == 0 {
            return;
        }
        // An array takes a one-frame walk to tell the two natives counted at their calls; an instance takes
        // one only when it is Cloneable. An event with nothing to count makes no upcall.
        let array = a.jvmti.is_array_class(class);
        let mut what = 0;
        if a.rules.arrays() && array != Some(false) && !v.made_at_a_call(a) {
            what |= COUNT_ARRAY;
        }
        if a.rules.objects() && array != Some(true) && v.cloned(a, jni, object) {
            what |= COUNT_INSTANCE;
        }
        if what == 0 {
            return;
        }
        let args = [jvalue { l: object }, jvalue { i: what }];
        let proxy = v.proxy.load(Ordering::Relaxed) as jclass;
        jni.keeping_pending_exception(|| {
            jni.call_static_void(proxy, vm_alloc as jni_sys::jmethodID, &args)
        });
    }
}

/// Wraps JNI `AllocObject` so that objects made by native code without a constructor are counted.
/// Called at VM_INIT, once `HeapProxy.vmAlloc` is resolved.
pub fn hook_alloc_object(a: &Agent) {
    if !a.rules.objects() {
        return;
    }
    if let Err(e) = crate::ffi::jni_functions::wrap_alloc_object(a.jvmti, count_instance) {
        eprintln!("instr: cannot wrap JNI AllocObject ({e}); objects it makes are not counted");
    }
}

fn count_instance(jni: Jni, object: jobject) {
    if crate::own_allocation::active() {
        return;
    }
    let Some(a) = agent() else { return };
    let v = &a.vm_allocators;
    let vm_alloc = v.vm_alloc.load(Ordering::Acquire);
    if vm_alloc == 0
        || !a.engaged.load(Ordering::Acquire)
        || !crate::switches::is_on(crate::switches::Probe::Alloc)
    {
        return;
    }
    let args = [jvalue { l: object }, jvalue { i: COUNT_INSTANCE }];
    let proxy = v.proxy.load(Ordering::Relaxed) as jclass;
    jni.keeping_pending_exception(|| {
        jni.call_static_void(proxy, vm_alloc as jni_sys::jmethodID, &args)
    });
}
