//! The natives HeapProxy calls, exported under their JNI names so the VM binds them on first call
//! without RegisterNatives (which would print a warning to the application's stdout for a java.base
//! class). They run inside Object.<init>: they allocate no Java object, throw nothing and never let a
//! panic unwind into the VM.

// Object handles are opaque and only passed back to the VM (see jni.rs).
#![allow(clippy::not_unsafe_ptr_arg_deref)]
use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Mutex, OnceLock};

use jni_sys::{jclass, jint, jlong, jobject, JNIEnv};

use crate::jni::Jni;
use crate::jvmti::FrameInfo;
use crate::stacks::{Allocated, Frame};
use crate::state::{agent, lock, Agent};

/// Frames read per allocation: the requested depth plus room for HeapProxy and a constructor chain.
const MAX_FRAMES: usize = 128;

#[derive(Clone, Copy)]
struct MethodKind {
    in_proxy: bool,
    constructor: bool,
    /// Whether the rules' allocation-site filter selects an allocation made in this method.
    site_selected: bool,
}

fn kinds() -> &'static Mutex<HashMap<usize, MethodKind>> {
    static KINDS: OnceLock<Mutex<HashMap<usize, MethodKind>>> = OnceLock::new();
    KINDS.get_or_init(Default::default)
}

fn kind(a: &Agent, method: jni_sys::jmethodID) -> MethodKind {
    if let Some(k) = lock(kinds()).get(&(method as usize)) {
        return *k;
    }
    let (name, descriptor) = a.jvmti.method_name(method).unwrap_or_default();
    let class = a
        .jvmti
        .method_declaring_class(method)
        .and_then(|c| a.jvmti.class_signature(c))
        .unwrap_or_default();
    // `Lcom/foo/Bar;` -> `com/foo/Bar`, the internal form the rules match.
    let internal = class
        .strip_prefix('L')
        .and_then(|c| c.strip_suffix(';'))
        .unwrap_or(&class);
    let k = MethodKind {
        in_proxy: internal == "java/lang/HeapProxy",
        constructor: name == "<init>",
        site_selected: a.rules.allocation_site_selected(
            internal.as_bytes(),
            name.as_bytes(),
            descriptor.as_bytes(),
        ),
    };
    lock(kinds()).insert(method as usize, k);
    k
}

/// The current thread's frames below HeapProxy (and, for an object, below its own constructors).
fn allocation_frames(a: &Agent, jni: Jni, object: Option<jobject>, out: &mut Vec<Frame>) {
    let mut buf = [FrameInfo {
        method: std::ptr::null_mut(),
        location: 0,
    }; MAX_FRAMES];
    let n = a.jvmti.stack_trace(0, &mut buf);
    let frames = &buf[..n];
    let mut i = 0;
    while i < n && kind(a, frames[i].method).in_proxy {
        i += 1;
    }
    if let Some(o) = object {
        // Object.<init> and the constructors of the object's own class and superclasses ran for this
        // object; the first other frame executed the `new`.
        while i < n && kind(a, frames[i].method).constructor {
            let Some(declaring) = a.jvmti.method_declaring_class(frames[i].method) else {
                break;
            };
            let own = jni.is_instance_of(o, declaring);
            jni.delete_local(declaring);
            if !own {
                break;
            }
            i += 1;
        }
    }
    // The rules filter objects by the frame that executed `new` (arrays were filtered when rewritten).
    if object.is_some() && i < n && !kind(a, frames[i].method).site_selected {
        return;
    }
    let depth = a.rules.depth() as usize;
    out.extend(
        frames[i..]
            .iter()
            .take(depth)
            .map(|f| (f.method as usize, f.location)),
    );
}

fn guarded(f: impl FnOnce()) {
    let _ = catch_unwind(AssertUnwindSafe(f));
}

#[no_mangle]
pub extern "system" fn Java_java_lang_HeapProxy_classSeen(
    env: *mut JNIEnv,
    _: jclass,
    slot: jint,
    o: jobject,
) {
    guarded(|| {
        let Some(a) = agent() else { return };
        let _ = env;
        if let Some(size) = a.jvmti.object_size(o) {
            lock(&a.instance_sizes).insert(slot, size);
        }
    })
}

#[no_mangle]
pub extern "system" fn Java_java_lang_HeapProxy_objectStack(
    env: *mut JNIEnv,
    _: jclass,
    o: jobject,
    slot: jint,
) {
    guarded(|| {
        let Some(a) = agent() else { return };
        let mut frames = Vec::with_capacity(16);
        allocation_frames(a, Jni(env), Some(o), &mut frames);
        if frames.is_empty() {
            return; // a site the rules exclude
        }
        // Bytes are count x instance size, applied when the report is written.
        a.stacks.add(Allocated::Object { slot }, &frames, 0);
        crate::xml_trace::object_allocated(Jni(env), o, slot);
    })
}

#[no_mangle]
pub extern "system" fn Java_java_lang_HeapProxy_arrayStack(
    env: *mut JNIEnv,
    _: jclass,
    _array: jobject,
    site: jint,
    bytes: jlong,
) {
    guarded(|| {
        let Some(a) = agent() else { return };
        let mut frames = Vec::with_capacity(16);
        allocation_frames(a, Jni(env), None, &mut frames);
        a.stacks
            .add(Allocated::Array { site }, &frames, bytes.max(0) as u64);
    })
}

/// Tags a sampled object with its class slot (plus one: tag 0 means untagged), so the heap walk at exit
/// finds it if it is still alive.
#[no_mangle]
pub extern "system" fn Java_java_lang_HeapProxy_tag(
    _env: *mut JNIEnv,
    _: jclass,
    o: jobject,
    slot: jint,
) {
    guarded(|| {
        if let Some(a) = agent() {
            a.jvmti.set_tag(o, slot as i64 + 1);
        }
    })
}
