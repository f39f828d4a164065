//! Objects the VM allocates without the bytecode the probes watch: `Object.clone()`,
//! `java.lang.reflect.Array.newInstance`, JNI `AllocObject`/`New*Array`, and the arrays the VM makes
//! for reflection. JVMTI reports them with VMObjectAlloc, on the allocating thread, where JNI may be
//! used; each is handed to `HeapProxy.vmAlloc`, which counts it like any other object or array.
//!
//! Some are counted by the rewriter instead, after the call that asked for them (`probes::vm_made`),
//! because C2 (and C1 for an array's clone, from JDK 21) makes them in code of its own that posts no
//! event: an array from `Object.clone` or `Array.newArray` (under `Array.newInstance(Class, int)`), and an
//! object from `Object.clone` when the frame below is a probed `super.clone()`. Counting their events too
//! would count them twice, so the callback leaves them alone.
//!
//! VMObjectAlloc also fires for allocations whose constructor then runs (JNI `NewObject`, reflective
//! `newInstance` on JDK 17, exceptions the VM creates), and those already reach `Object.<init>`. So an
//! instance counts here only when the allocating call cannot run a constructor: the top frame is
//! `Object.clone`. Arrays never run a constructor. Not counted, and documented in
//! docs/REPORTS.md ("What is counted"): JNI `AllocObject` from an application's own native method
//! (this rule cannot tell it from `NewObject`), and `Unsafe.allocateInstance`: JDK 17 does not report
//! it, and on JDK 25 java.lang.invoke and reflection call it and then run the constructor, so counting
//! it would count those objects twice.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use instr_rewriter::bytecode::opcode as op;
use instr_rewriter::bytes::read_u2;
use instr_rewriter::constant_pool::ConstantPool;
use instr_rewriter::probes::PROXY_CLASS;
use jni_sys::{jclass, jlong, jmethodID, jobject, jvalue};

use crate::jni::Jni;
use crate::jvmti::{jthread, FrameInfo};
use crate::state::{agent, lock, Agent};

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
    /// Per (method, bytecode offset) of a call into `Object.clone`: whether the rewriter counts its
    /// objects after it. Read from the method's bytecode once per call site.
    counting_calls: Mutex<HashMap<(usize, i64), bool>>,
}

/// What `HeapProxy.vmAlloc` may count, as its `what` argument: arrays, and instances allocated without a
/// constructor.
const COUNT_ARRAY: i32 = 1;
const COUNT_INSTANCE: i32 = 2;

impl VmAllocators {
    /// Looks the methods up; until this has run, VMObjectAlloc events are ignored.
    pub fn resolve(&self, jni: Jni, proxy: jclass) {
        let find = |class: &str, name: &str, sig: &str, is_static: bool| {
            let c = jni.find_class(class)?;
            let m = if is_static {
                jni.static_method(c, name, sig)
            } else {
                jni.method(c, name, sig)
            };
            jni.delete_local(c);
            m
        };
        if let Some(m) = find("java/lang/Object", "clone", "()Ljava/lang/Object;", false) {
            self.clone.store(m as usize, Ordering::Relaxed);
        }
        let new_array = "(Ljava/lang/Class;I)Ljava/lang/Object;";
        if let Some(m) = find("java/lang/reflect/Array", "newArray", new_array, true) {
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
    /// at their calls: the top frame says.
    fn array_counted_at_call(&self, a: &Agent) -> bool {
        let [top] = top_frames::<1>(a);
        top.is_some_and(|f| {
            f.method as usize == self.clone.load(Ordering::Relaxed)
                || f.method as usize == self.new_array.load(Ordering::Relaxed)
        })
    }

    /// Whether the object being reported was made by `Object.clone`, which runs no constructor, and is not
    /// counted after the call. The stack is walked only for a Cloneable object: the VM makes others
    /// (exceptions, reflection) often. IsInstanceOf is not allowed while an exception is pending; the walk
    /// alone decides then.
    fn uncounted_clone(&self, a: &Agent, jni: Jni, object: jobject) -> bool {
        let cloneable = self.cloneable.load(Ordering::Relaxed) as jclass;
        if !cloneable.is_null()
            && !jni.exception_pending()
            && !jni.is_instance_of(object, cloneable)
        {
            return false;
        }
        match top_frames::<2>(a) {
            [Some(top), caller] if top.method as usize == self.clone.load(Ordering::Relaxed) => {
                caller.is_none_or(|c| !self.counted_at_call(a, jni, c))
            }
            _ => false,
        }
    }

    /// Whether the call `caller` is at is followed by the rewriter's probe: `invokespecial`, then
    /// `dup; invokestatic java/lang/HeapProxy...`, with `superCloned`'s two arguments pushed before the call
    /// (`probes::vm_made`). Only the rewriter calls HeapProxy.
    fn counted_at_call(&self, a: &Agent, jni: Jni, caller: FrameInfo) -> bool {
        let key = (caller.method as usize, caller.location);
        if let Some(&known) = lock(&self.counting_calls).get(&key) {
            return known;
        }
        let counted = probe_follows(a, jni, caller.method, caller.location as usize);
        lock(&self.counting_calls).insert(key, counted);
        counted
    }
}

fn probe_follows(a: &Agent, jni: Jni, method: jmethodID, pc: usize) -> bool {
    let Ok(code) = a.jvmti.bytecodes(method) else {
        return false;
    };
    if code.get(pc) != Some(&op::INVOKESPECIAL) || code.get(pc + 3) != Some(&op::DUP) {
        return false;
    }
    // `superCloned` pushes the method id and the superclass before its call; `objectAlloc` nothing.
    let mut at = pc + 4;
    for _ in 0..2 {
        at += match code.get(at) {
            Some(&(op::ICONST_M1..=op::ICONST_5)) => 1,
            Some(&(op::BIPUSH | op::LDC)) => 2,
            Some(&(op::SIPUSH | op::LDC_W)) => 3,
            _ => break,
        };
    }
    if code.get(at) != Some(&op::INVOKESTATIC) || code.len() < at + 3 {
        return false;
    }
    let Some(class) = a.jvmti.method_declaring_class(method) else {
        return false;
    };
    let pool_bytes = a.jvmti.constant_pool(class);
    jni.delete_local(class);
    let Ok(bytes) = pool_bytes else {
        return false;
    };
    ConstantPool::read_alone(&bytes)
        .and_then(|pool| pool.member_ref(read_u2(&code, at + 1)))
        .is_ok_and(|(owner, _, _)| owner == PROXY_CLASS.as_bytes())
}

/// The current thread's top N frames: one tells the native an array came from, two the call under a clone.
fn top_frames<const N: usize>(a: &Agent) -> [Option<FrameInfo>; N] {
    let mut frames = [FrameInfo {
        method: std::ptr::null_mut(),
        location: 0,
    }; N];
    let n = a.jvmti.stack_trace(0, &mut frames);
    std::array::from_fn(|k| (k < n).then_some(frames[k]))
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
        // An array takes a stack walk to tell the two natives counted at their calls; an instance takes one
        // only when it is Cloneable. An event with nothing to count makes no upcall.
        let array = a.jvmti.is_array_class(class);
        let mut what = 0;
        if a.rules.arrays() && array != Some(false) && !v.array_counted_at_call(a) {
            what |= COUNT_ARRAY;
        }
        if a.rules.objects() && array != Some(true) && v.uncounted_clone(a, jni, object) {
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
