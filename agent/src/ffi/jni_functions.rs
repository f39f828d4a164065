//! JNI functions the agent wraps in the VM's function table: `AllocObject`, whose objects run no
//! constructor and so never reach the allocation probe in `Object.<init>`.

use std::sync::atomic::{AtomicUsize, Ordering};

use jni_sys::{jclass, jobject, JNIEnv};

use super::guard::{guard, Policy};
use super::jni::Jni;
use super::jvmti::{Jvmti, ERROR_NONE};

type AllocObjectFn = unsafe extern "system" fn(*mut JNIEnv, jclass) -> jobject;

/// The VM's own `AllocObject`, then what to do with each object it makes.
static ORIGINAL_ALLOC_OBJECT: AtomicUsize = AtomicUsize::new(0);
static AFTER_ALLOC_OBJECT: AtomicUsize = AtomicUsize::new(0);

/// Replaces `AllocObject` with one that calls `after(jni, object)` for every object it makes.
pub fn wrap_alloc_object(jvmti: Jvmti, after: fn(Jni, jobject)) -> Result<(), String> {
    let mut table = jvmti
        .jni_function_table()
        .ok_or("GetJNIFunctionTable failed")?;
    let original = table.AllocObject.ok_or("the table has no AllocObject")?;
    AFTER_ALLOC_OBJECT.store(after as usize, Ordering::Release);
    ORIGINAL_ALLOC_OBJECT.store(original as usize, Ordering::Release);
    table.AllocObject = Some(alloc_object);
    match jvmti.set_jni_function_table(&table) {
        ERROR_NONE => Ok(()),
        e => Err(format!("SetJNIFunctionTable failed (JVMTI error {e})")),
    }
}

unsafe extern "system" fn alloc_object(env: *mut JNIEnv, class: jclass) -> jobject {
    // SAFETY: stored by wrap_alloc_object before this function was installed, never changed after.
    let original: AllocObjectFn =
        unsafe { std::mem::transmute(ORIGINAL_ALLOC_OBJECT.load(Ordering::Acquire)) };
    // SAFETY: the arguments are the caller's, passed on unchanged.
    let object = unsafe { original(env, class) };
    if !object.is_null() {
        const P: Policy = Policy::once("JNI AllocObject", "objects it makes may be uncounted");
        guard(P, (), || {
            // SAFETY: stored before this function was installed; a `fn(Jni, jobject)`.
            let after: fn(Jni, jobject) =
                unsafe { std::mem::transmute(AFTER_ALLOC_OBJECT.load(Ordering::Acquire)) };
            // SAFETY: the JNIEnv the native caller passed, of the current thread.
            after(unsafe { Jni::from_raw(env) }, object)
        });
    }
    object
}
