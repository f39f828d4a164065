//! What HeapProxy's natives do (ffi/natives.rs exports them and guards them). They run inside allocation
//! probes: they allocate no Java object and throw nothing.

use std::sync::atomic::Ordering;

use jni_sys::{jclass, jint, jlong, jobject, jvalue};

use crate::ffi::Jni;

use crate::jvmti::FrameInfo;
use crate::live::{self, Owner};
use crate::state::{agent, lock};

/// Frames a stack may keep: the rules cap the depth at 64.
const MAX_DEPTH: usize = 64;

/// HeapProxy frames above the allocating method: the native itself and the probe that called it
/// (`objectNew` or `arrayAlloc`). The Early flavour adds its wrapper, recognised by its jmethodID.
const PROXY_FRAMES: jint = 2;

/// Whether `super.clone()` looking from `start` up runs `Object.clone`: no class on the way declares an
/// instance `clone()` that overrides it (JNI's lookup also finds private ones, which cannot, so the search
/// goes on above those). False when JNI or JVMTI cannot say.
pub fn reaches_object_clone(jni: Jni, start: jclass) -> bool {
    let Some(a) = agent() else { return false };
    let mut from = start;
    // Each step climbs at least one class; the bound only guards against a broken answer.
    for _ in 0..1024 {
        let Some(method) = jni.method(from, "clone", "()Ljava/lang/Object;") else {
            return false;
        };
        let Some(declaring) = a.jvmti.method_declaring_class(method) else {
            return false;
        };
        if a.jvmti.class_signature(declaring).as_deref() == Some("Ljava/lang/Object;") {
            return true;
        }
        if a.jvmti.method_modifiers(method) & MODIFIER_PRIVATE == 0 {
            return false;
        }
        from = jni.superclass(declaring);
        if from.is_null() {
            return false;
        }
    }
    false
}

const MODIFIER_PRIVATE: jint = 0x0002;

/// The dense index of a class's name (class_index.rs), recorded with the instance size; -1 when full.
/// Without an instance (`o` null: the counting probes keep the object out of their slow branch, so that
/// the JIT can still scalar-replace it), an instance's size is read from one made here with AllocObject:
/// no constructor runs, no finalizer is registered, nothing counts it (VMObjectAlloc counts only clones
/// and arrays), and it is garbage at once; once per class name. Array classes have no instance size
/// (each array's bytes are counted as it is allocated).
pub fn class_index(jni: Jni, class: jclass, o: jobject) -> jint {
    let Some(a) = agent() else { return -1 };
    let Some(signature) = a.jvmti.class_signature(class) else {
        return -1;
    };
    let size = if o.is_null() {
        if a.jvmti.is_array_class(class).unwrap_or(true) {
            Some(0)
        } else {
            instance_size(a, jni, class)
        }
    } else {
        a.jvmti.object_size(o)
    };
    let size = size.unwrap_or(0).max(0) as u64;
    lock(&a.class_index).index(&signature, size).unwrap_or(-1)
}

fn instance_size(a: &crate::state::Agent, jni: Jni, class: jclass) -> Option<jlong> {
    let _own = crate::own_allocation::OwnAllocation::begin();
    let o = jni.alloc_object(class)?;
    let size = a.jvmti.object_size(o);
    jni.delete_local(o);
    size
}

/// The stack of an allocation at a static site, from the allocating frame down to the rules' depth.
/// The site already names the allocating method, and the rules filtered sites when the class was
/// rewritten, so no frame needs to be looked up here: this is one GetStackTrace and one table update.
pub fn site_stack(_: Jni, site: jint, bytes: jlong) {
    {
        let Some(a) = agent() else { return };
        let depth = (a.rules.depth() as usize).min(MAX_DEPTH);
        let mut buf = [FrameInfo {
            method: std::ptr::null_mut(),
            location: 0,
        }; MAX_DEPTH + 1];
        let n = a.jvmti.stack_trace(PROXY_FRAMES, &mut buf[..depth + 1]);
        let frames = &buf[..n];
        let skip = usize::from(frames.first().is_some_and(|f| {
            a.early_probes
                .iter()
                .any(|m| m.load(Ordering::Relaxed) == f.method as usize)
        }));
        let frames = &frames[skip..n.min(skip + depth)];
        a.stacks.add(site, frames, bytes.max(0) as u64);
    }
}

/// Tags a sampled object for live tracking; the tag carries its owner and size (live.rs).
fn tag(o: jobject, owner: Owner) {
    let Some(a) = agent() else { return };
    let Some(live) = &a.live else { return };
    let tag = live::encode(owner, a.jvmti.object_size(o).unwrap_or(0));
    if a.jvmti.set_tag(o, tag) == crate::jvmti::ERROR_NONE {
        live.tagged(tag);
    }
}

/// A sampled object of the class of dense index `index` (HeapProxyAllocs; per-class live counts, depth 0).
pub fn tag_class(_: Jni, o: jobject, index: jint) {
    tag(o, Owner::ClassSlot(index as u32));
}

/// A sampled object or array allocated at `site` (per-site live counts, depth >= 1).
pub fn tag_site(_: Jni, o: jobject, site: jint) {
    tag(o, Owner::Site(site as u32));
}

/// Links the natives the allocation probes call, by calling each once with arguments that make it do
/// nothing (null objects, site 0). HotSpot links a native at its first call, and the lookup runs Java code
/// that allocates: were that first call made from inside a probe of `Object.<init>`, the lookup's own
/// allocations would call the probe again, and the thread would overflow its stack.
pub fn link(jni: Jni, proxy: jclass) {
    let null = jvalue {
        l: std::ptr::null_mut(),
    };
    let zero = jvalue { i: 0 };
    if let Some(m) = jni.static_method(
        proxy,
        "classIndex",
        "(Ljava/lang/Class;Ljava/lang/Object;)I",
    ) {
        jni.call_static_int(proxy, m, &[null, null]);
    }
    for name in ["tag", "tagSite"] {
        if let Some(m) = jni.static_method(proxy, name, "(Ljava/lang/Object;I)V") {
            jni.call_static_void(proxy, m, &[null, zero]);
        }
    }
    if let Some(m) = jni.static_method(proxy, "siteStack", "(IJ)V") {
        jni.call_static_void(proxy, m, &[zero, jvalue { j: 0 }]);
    }
}
