//! Objects the VM allocates without the bytecode the probes watch: `Object.clone()`,
//! `java.lang.reflect.Array.newInstance`, JNI `AllocObject`/`New*Array`, and the arrays the VM makes
//! for reflection. JVMTI reports them with VMObjectAlloc, on the allocating thread, where JNI may be
//! used; each is handed to `HeapProxy.vmAlloc`, which counts it like any other object or array.
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
        if let Some(m) = find("java/lang/Object", "clone", "()Ljava/lang/Object;") {
            self.clone.store(m as usize, Ordering::Relaxed);
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
        let mut top = [FrameInfo {
            method: std::ptr::null_mut(),
            location: 0,
        }];
        a.jvmti.stack_trace(0, &mut top) == 1
            && top[0].method as usize == self.clone.load(Ordering::Relaxed)
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
        // The stack walk that tells a clone is only for instances: the VM reports arrays far more often
        // (`Array.newInstance` under `Arrays.copyOf`, outside C2 code), and an event with nothing to count
        // makes no upcall.
        let array = a.jvmti.is_array_class(class);
        let mut what = 0;
        if a.rules.arrays() && array != Some(false) {
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
