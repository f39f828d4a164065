//! The JVMTI calls that add and remove probes at run time (switches.rs): which loaded classes may be
//! retransformed, and RetransformClasses itself. Slot numbers are jvmti.h's.

use std::ptr;

use jni_sys::{jboolean, jclass, jint, jmethodID};

use super::jvmti::{call, Env, Jvmti, JvmtiError, ERROR_NONE};

/// GetBytecodes' answer for a native method, which has none.
pub const ERROR_NATIVE_METHOD: JvmtiError = 51;

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

    /// GetBytecodes (can_get_bytecodes): a method's code as in its class file; an abstract method has none,
    /// a native one answers ERROR_NATIVE_METHOD.
    pub fn bytecodes(&self, method: jmethodID) -> Result<Vec<u8>, JvmtiError> {
        let mut len: jint = 0;
        let mut code: *mut u8 = ptr::null_mut();
        let e = call!(
            self,
            75,
            fn(jmethodID, *mut jint, *mut *mut u8),
            method,
            &mut len,
            &mut code
        );
        if e != ERROR_NONE {
            return Err(e);
        }
        Ok(self.take_array(e, code, len))
    }

    /// GetConstantPool (can_get_constant_pool): the class's constant pool in class-file form, as
    /// `constant_pool_count` (two bytes, big-endian) and the entries, so that the rewriter's reader can
    /// parse it. Its indexes are the ones GetBytecodes' code uses.
    pub fn constant_pool(&self, class: jclass) -> Result<Vec<u8>, JvmtiError> {
        let (mut count, mut len): (jint, jint) = (0, 0);
        let mut bytes: *mut u8 = ptr::null_mut();
        let e = call!(
            self,
            146,
            fn(jclass, *mut jint, *mut jint, *mut *mut u8),
            class,
            &mut count,
            &mut len,
            &mut bytes
        );
        if e != ERROR_NONE {
            return Err(e);
        }
        let mut pool = (count.clamp(0, u16::MAX as jint) as u16)
            .to_be_bytes()
            .to_vec();
        pool.extend(self.take_array(e, bytes, len));
        Ok(pool)
    }
}
