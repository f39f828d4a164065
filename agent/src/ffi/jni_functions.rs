//! JNI functions the agent wraps in the VM's function table: `AllocObject`, whose objects run no
//! constructor and so never reach the allocation probe in `Object.<init>`.

use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};

use jni_sys::{jclass, jobject, JNIEnv};

use super::guard::{guard, Policy};
use super::jni::Jni;
use super::jvmti::Jvmti;

type AllocObjectFn = unsafe extern "system" fn(*mut JNIEnv, jclass) -> jobject;

/// The VM's own `AllocObject`, then what to do with each object it makes.
static ORIGINAL_ALLOC_OBJECT: AtomicUsize = AtomicUsize::new(0);
static AFTER_ALLOC_OBJECT: AtomicUsize = AtomicUsize::new(0);

/// `AllocObject`'s slot in the JNI function table.
const ALLOC_OBJECT_SLOT: usize =
    std::mem::offset_of!(jni_sys::JNINativeInterface_, AllocObject) / std::mem::size_of::<usize>();

/// Replaces `AllocObject` with one that calls `after(jni, object)` for every object it makes. Once per VM:
/// a second wrap would make the wrapper its own original.
pub fn wrap_alloc_object(jvmti: Jvmti, after: fn(Jni, jobject)) -> Result<(), String> {
    let mut refused = None;
    jvmti.edit_jni_function(ALLOC_OBJECT_SLOT, |original| {
        let ours = alloc_object as AllocObjectFn as *const c_void;
        if original.is_null() || original == ours {
            refused = Some(if original.is_null() {
                "the table has no AllocObject"
            } else {
                "AllocObject is wrapped already"
            });
            return None;
        }
        // Both stored before the wrapper is installed, which reads them.
        AFTER_ALLOC_OBJECT.store(after as usize, Ordering::Release);
        ORIGINAL_ALLOC_OBJECT.store(original as usize, Ordering::Release);
        Some(ours)
    })?;
    refused.map_or(Ok(()), |why| Err(why.into()))
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
