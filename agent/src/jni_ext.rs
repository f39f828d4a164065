//! The JNI calls of the thread and monitor profiler, wrapped like those of jni.rs: every call that can
//! raise clears the exception.

// JNI references are opaque handles (see jni.rs).
#![allow(clippy::not_unsafe_ptr_arg_deref)]

use std::ffi::CString;

use jni_sys::{jclass, jfieldID, jint, jobject, jvalue};

use crate::jni::{jni, Jni};

impl Jni {
    pub fn object_class(&self, o: jobject) -> jclass {
        jni!(self, GetObjectClass, o)
    }

    pub fn new_string(&self, s: &str) -> Option<jobject> {
        let s = CString::new(s).ok()?;
        let v = jni!(self, NewStringUTF, s.as_ptr());
        (!self.clear_exception() && !v.is_null()).then_some(v)
    }

    pub fn new_object(
        &self,
        class: jclass,
        ctor: jni_sys::jmethodID,
        args: &[jvalue],
    ) -> Option<jobject> {
        let v = jni!(self, NewObjectA, class, ctor, args.as_ptr());
        (!self.clear_exception() && !v.is_null()).then_some(v)
    }

    pub fn field(&self, class: jclass, name: &str, sig: &str) -> Option<jfieldID> {
        let (n, s) = (CString::new(name).ok()?, CString::new(sig).ok()?);
        let f = jni!(self, GetFieldID, class, n.as_ptr(), s.as_ptr());
        (!self.clear_exception() && !f.is_null()).then_some(f)
    }

    pub fn object_field(&self, o: jobject, f: jfieldID) -> Option<jobject> {
        let v = jni!(self, GetObjectField, o, f);
        (!self.clear_exception() && !v.is_null()).then_some(v)
    }

    /// Opens a frame for `capacity` local references; `pop_frame` frees every reference made since.
    pub fn push_frame(&self, capacity: jint) -> bool {
        jni!(self, PushLocalFrame, capacity) == 0 && !self.clear_exception()
    }

    pub fn pop_frame(&self) {
        jni!(self, PopLocalFrame, std::ptr::null_mut());
    }
}
