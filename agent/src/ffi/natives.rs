//! The native methods of HeapProxy and HeapProxyCalls, exported under their JNI names so that the VM binds
//! them on first call without RegisterNatives (which would print a warning for a java.base class). Each
//! is a guarded shim over a safe function of natives.rs or calls.rs. They run inside allocation and call
//! probes: the fallback on a panic is what the probe can take silently (nothing counted, -1, 0).

use jni_sys::{jboolean, jclass, jint, jintArray, jlong, jlongArray, jobject, jstring, JNIEnv};

use super::guard::{guard, Policy};
use super::jni::Jni;

/// SAFETY (for every caller below): a native method receives the JNIEnv of the calling thread.
fn jni(env: *mut JNIEnv) -> Jni {
    unsafe { Jni::from_raw(env) }
}

const ALLOCATIONS: &str = "allocation counts may be incomplete";
const CALLS: &str = "call counts may be incomplete";

#[no_mangle]
pub extern "system" fn Java_java_lang_HeapProxy_classIndex(
    env: *mut JNIEnv,
    _: jclass,
    class: jclass,
    o: jobject,
) -> jint {
    const P: Policy = Policy::once("HeapProxy.classIndex", ALLOCATIONS);
    guard(P, -1, || crate::natives::class_index(jni(env), class, o))
}

#[no_mangle]
pub extern "system" fn Java_java_lang_HeapProxy_siteStack(
    env: *mut JNIEnv,
    _: jclass,
    site: jint,
    bytes: jlong,
) {
    const P: Policy = Policy::once("HeapProxy.siteStack", ALLOCATIONS);
    guard(P, (), || crate::natives::site_stack(jni(env), site, bytes))
}

#[no_mangle]
pub extern "system" fn Java_java_lang_HeapProxy_reachesObjectClone(
    env: *mut JNIEnv,
    _: jclass,
    start: jclass,
) -> jboolean {
    const P: Policy = Policy::once("HeapProxy.reachesObjectClone", ALLOCATIONS);
    guard(P, 0, || {
        crate::natives::reaches_object_clone(jni(env), start) as jboolean
    })
}

#[no_mangle]
pub extern "system" fn Java_java_lang_HeapProxy_tag(
    env: *mut JNIEnv,
    _: jclass,
    o: jobject,
    index: jint,
) {
    const P: Policy = Policy::once("HeapProxy.tag", "live counts may be incomplete");
    guard(P, (), || crate::natives::tag_class(jni(env), o, index))
}

#[no_mangle]
pub extern "system" fn Java_java_lang_HeapProxy_tagSite(
    env: *mut JNIEnv,
    _: jclass,
    o: jobject,
    site: jint,
) {
    const P: Policy = Policy::once("HeapProxy.tagSite", "live counts may be incomplete");
    guard(P, (), || crate::natives::tag_site(jni(env), o, site))
}

#[no_mangle]
pub extern "system" fn Java_java_lang_HeapProxy_traceObject(
    env: *mut JNIEnv,
    _: jclass,
    o: jobject,
    index: jint,
) {
    const P: Policy = Policy::once("HeapProxy.traceObject", "the XML trace may miss objects");
    guard(P, (), || {
        crate::xml_trace::object_allocated(jni(env), o, index)
    })
}

/// `HeapProxy.heapDump()`: the path of the dump written now, or null.
#[no_mangle]
pub extern "system" fn Java_java_lang_HeapProxy_heapDump(env: *mut JNIEnv, _: jclass) -> jstring {
    const P: Policy = Policy::once("HeapProxy.heapDump", "no heap dump is written");
    guard(P, std::ptr::null_mut(), || {
        let jni = jni(env);
        crate::heap_dump::requested(jni)
            .and_then(|path| jni.new_string(&path))
            .unwrap_or(std::ptr::null_mut())
    })
}

/// `HeapProxy.control(command)` (instr.Control): the command's answer, or null.
#[no_mangle]
pub extern "system" fn Java_java_lang_HeapProxy_control(
    env: *mut JNIEnv,
    _: jclass,
    command: jstring,
) -> jstring {
    const P: Policy = Policy::once("HeapProxy.control", "instr.Control gets no answer");
    guard(P, std::ptr::null_mut(), || {
        let jni = jni(env);
        let line = jni.string(command).unwrap_or_default();
        jni.new_string(&crate::commands::run(jni, &line))
            .unwrap_or(std::ptr::null_mut())
    })
}

#[no_mangle]
pub extern "system" fn Java_java_lang_HeapProxyCalls_settings(
    env: *mut JNIEnv,
    _: jclass,
) -> jlongArray {
    const P: Policy = Policy::once("HeapProxyCalls.settings", CALLS);
    guard(P, std::ptr::null_mut(), || crate::calls::settings(jni(env)))
}

/// The calling thread's CPU time; a system call, nothing that can panic, but guarded like every entry.
#[no_mangle]
pub extern "system" fn Java_java_lang_HeapProxyCalls_cpuNow(_env: *mut JNIEnv, _: jclass) -> jlong {
    const P: Policy = Policy::once("HeapProxyCalls.cpuNow", CALLS);
    guard(P, 0, super::libc::thread_cpu_now)
}

#[no_mangle]
pub extern "system" fn Java_java_lang_HeapProxyCalls_methodIds(
    env: *mut JNIEnv,
    _: jclass,
    class: jstring,
    name: jstring,
    descriptor: jstring,
) -> jintArray {
    const P: Policy = Policy::once("HeapProxyCalls.methodIds", "instr.Counts finds no method");
    guard(P, std::ptr::null_mut(), || {
        crate::calls::method_ids(jni(env), class, name, descriptor)
    })
}

#[no_mangle]
pub extern "system" fn Java_java_lang_HeapProxyCalls_classSelected(
    env: *mut JNIEnv,
    _: jclass,
    class: jstring,
) -> jboolean {
    const P: Policy = Policy::once(
        "HeapProxyCalls.classSelected",
        "instr.Counts finds no class",
    );
    guard(P, 0, || {
        crate::calls::class_selected(jni(env), class) as jboolean
    })
}

#[no_mangle]
pub extern "system" fn Java_java_lang_HeapProxyCalls_siteIds(
    env: *mut JNIEnv,
    _: jclass,
    class: jstring,
    name: jstring,
    line: jint,
) -> jintArray {
    const P: Policy = Policy::once("HeapProxyCalls.siteIds", "instr.Counts finds no site");
    guard(P, std::ptr::null_mut(), || {
        crate::calls::site_ids(jni(env), class, name, line)
    })
}
