//! The JVMTI calls that add and remove probes at run time (switches.rs): which loaded classes may be
//! retransformed, and RetransformClasses itself. Slot numbers are jvmti.h's.

use jni_sys::{jboolean, jclass, jint};

use super::jvmti::{call, Env, Jvmti, JvmtiError, ERROR_NONE};

impl Jvmti {
    /// IsModifiableClass: false for primitive and array classes, hidden classes and whatever else this VM
    /// refuses to retransform.
    pub fn is_modifiable_class(&self, class: jclass) -> bool {
        let mut modifiable: jboolean = 0;
        let e = call!(self, 45, fn(jclass, *mut jboolean), class, &mut modifiable);
        e == ERROR_NONE && modifiable != 0
    }

    /// RetransformClasses on `classes` (local or global references): the VM runs ClassFileLoadHook on each
    /// class's original bytes and redefines the class with what the hooks return, at one safepoint.
    pub fn retransform_classes(&self, classes: &[jclass]) -> JvmtiError {
        if classes.is_empty() {
            return ERROR_NONE;
        }
        call!(
            self,
            152,
            fn(jint, *const jclass),
            classes.len() as jint,
            classes.as_ptr()
        )
    }
}
