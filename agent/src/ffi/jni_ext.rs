//! The JNI calls of the thread and monitor profiler, wrapped like those of jni.rs: every call that can
//! raise clears the exception.

use std::ffi::CString;

use jni_sys::{jclass, jfieldID, jint, jintArray, jlong, jlongArray, jobject, jstring, jvalue};

use crate::jni::{jni, Jni};

impl Jni {
    pub fn object_class(&self, o: jobject) -> jclass {
        jni!(self, GetObjectClass, o)
    }

    /// A class's superclass (a local reference); null for java.lang.Object, interfaces and primitives.
    pub fn superclass(&self, class: jclass) -> jclass {
        jni!(self, GetSuperclass, class)
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

    /// A Java string's contents (None for null).
    pub fn string(&self, s: jstring) -> Option<String> {
        if s.is_null() {
            return None;
        }
        let chars = jni!(self, GetStringUTFChars, s, std::ptr::null_mut());
        if chars.is_null() {
            self.clear_exception();
            return None;
        }
        // SAFETY: the VM returned a NUL-terminated modified-UTF-8 copy, released right after.
        let out = unsafe { std::ffi::CStr::from_ptr(chars) }
            .to_string_lossy()
            .into_owned();
        jni!(self, ReleaseStringUTFChars, s, chars);
        Some(out)
    }

    /// A new `long[]` holding `values` (null if it could not be made).
    pub fn new_long_array(&self, values: &[i64]) -> jlongArray {
        let array = jni!(self, NewLongArray, values.len() as jint);
        if array.is_null() {
            self.clear_exception();
            return array;
        }
        jni!(
            self,
            SetLongArrayRegion,
            array,
            0,
            values.len() as jint,
            values.as_ptr()
        );
        array
    }

    /// A new `int[]` holding `values` (null if it could not be made).
    pub fn new_int_array_of(&self, values: &[i32]) -> jintArray {
        let array = jni!(self, NewIntArray, values.len() as jint);
        if array.is_null() {
            self.clear_exception();
            return array;
        }
        jni!(
            self,
            SetIntArrayRegion,
            array,
            0,
            values.len() as jint,
            values.as_ptr()
        );
        array
    }

    /// The first `len` elements (or all) of a `long[]` (empty for null).
    pub fn long_region(&self, array: jobject, len: usize) -> Vec<i64> {
        if array.is_null() {
            return Vec::new();
        }
        let n = (self.array_length(array).max(0) as usize).min(len);
        let mut v = vec![0 as jlong; n];
        jni!(
            self,
            GetLongArrayRegion,
            array,
            0,
            n as jint,
            v.as_mut_ptr()
        );
        self.clear_exception();
        v
    }

    /// An instance field of type `long`.
    pub fn long_field(&self, o: jobject, f: jfieldID) -> jlong {
        jni!(self, GetLongField, o, f)
    }

    /// JNI MonitorEnter (`enter`) or MonitorExit on `o`; false if it failed.
    pub fn monitor(&self, o: jobject, enter: bool) -> bool {
        let rc = if enter {
            jni!(self, MonitorEnter, o)
        } else {
            jni!(self, MonitorExit, o)
        };
        self.clear_exception();
        rc == 0
    }
}
