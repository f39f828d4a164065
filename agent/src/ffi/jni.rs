//! Typed wrappers over the JNI calls the agent makes. Every call that can raise a Java exception is
//! followed by a check that clears it: an exception escaping into the VM from an agent callback (or from
//! inside Object.<init>) would be fatal.

use std::ffi::CString;
use std::ptr;

use jni_sys::{jboolean, jclass, jfieldID, jint, jlong, jmethodID, jobject, jsize, jvalue, JNIEnv};

/// The JNI environment of the current thread. Only the FFI layer makes one, from a pointer the VM
/// handed in; it is valid on this thread for the duration of the call that received it.
#[derive(Clone, Copy)]
pub struct Jni(pub(in crate::ffi) *mut JNIEnv);

macro_rules! jni {
    ($env:expr, $f:ident $(, $arg:expr)*) => {{
        // SAFETY: the JNIEnv pointer comes from the VM for the current thread; the function exists in every
        // JNI version the agent supports (1.2+).
        unsafe { ((**$env.0).$f.unwrap())($env.0 $(, $arg)*) }
    }};
}

// The thread and monitor profiler's calls live in jni_ext.rs.
pub(crate) use jni;

impl Jni {
    /// # Safety
    /// `env` is the JNIEnv the VM passed to the current call on the current thread.
    pub(crate) unsafe fn from_raw(env: *mut JNIEnv) -> Jni {
        Jni(env)
    }

    /// Clears a pending exception; true if there was one.
    pub fn clear_exception(&self) -> bool {
        let pending = jni!(self, ExceptionCheck) != 0;
        if pending {
            jni!(self, ExceptionClear);
        }
        pending
    }

    /// Runs `f`, which may call Java, with the program's pending exception (if any) set aside and raised
    /// again afterwards. A callback can arrive while an exception is pending (VMObjectAlloc for the
    /// objects the VM makes while it throws a `NoClassDefFoundError`); calling Java then is not allowed,
    /// and clearing what the call raised would swallow the program's own exception.
    pub fn keeping_pending_exception<R>(&self, f: impl FnOnce() -> R) -> R {
        let pending = jni!(self, ExceptionOccurred);
        if !pending.is_null() {
            jni!(self, ExceptionClear);
        }
        let result = f();
        if !pending.is_null() {
            self.clear_exception();
            jni!(self, Throw, pending);
            self.delete_local(pending);
        }
        result
    }

    /// Whether an exception is pending (most JNI calls are not allowed then).
    pub fn exception_pending(&self) -> bool {
        jni!(self, ExceptionCheck) != 0
    }

    pub fn define_boot_class(&self, name: &str, bytes: &[u8]) -> Option<jclass> {
        let name = CString::new(name).ok()?;
        let c = jni!(
            self,
            DefineClass,
            name.as_ptr(),
            ptr::null_mut(),
            bytes.as_ptr().cast(),
            bytes.len() as jsize
        );
        (!self.clear_exception() && !c.is_null()).then_some(c)
    }

    pub fn find_class(&self, name: &str) -> Option<jclass> {
        let name = CString::new(name).ok()?;
        let c = jni!(self, FindClass, name.as_ptr());
        (!self.clear_exception() && !c.is_null()).then_some(c)
    }

    /// None also for a null class (no HeapProxy: the rules select no probe), so readers find empty tables.
    pub fn static_field(&self, class: jclass, name: &str, sig: &str) -> Option<jfieldID> {
        if class.is_null() {
            return None;
        }
        let (n, s) = (CString::new(name).ok()?, CString::new(sig).ok()?);
        let f = jni!(self, GetStaticFieldID, class, n.as_ptr(), s.as_ptr());
        (!self.clear_exception() && !f.is_null()).then_some(f)
    }

    pub fn static_method(&self, class: jclass, name: &str, sig: &str) -> Option<jmethodID> {
        let (n, s) = (CString::new(name).ok()?, CString::new(sig).ok()?);
        let m = jni!(self, GetStaticMethodID, class, n.as_ptr(), s.as_ptr());
        (!self.clear_exception() && !m.is_null()).then_some(m)
    }

    pub fn call_static_void(&self, class: jclass, method: jmethodID, args: &[jvalue]) -> bool {
        jni!(self, CallStaticVoidMethodA, class, method, args.as_ptr());
        !self.clear_exception()
    }

    pub fn call_static_int(
        &self,
        class: jclass,
        method: jmethodID,
        args: &[jvalue],
    ) -> Option<jint> {
        let v = jni!(self, CallStaticIntMethodA, class, method, args.as_ptr());
        (!self.clear_exception()).then_some(v)
    }

    pub fn method(&self, class: jclass, name: &str, sig: &str) -> Option<jmethodID> {
        let (n, s) = (CString::new(name).ok()?, CString::new(sig).ok()?);
        let m = jni!(self, GetMethodID, class, n.as_ptr(), s.as_ptr());
        (!self.clear_exception() && !m.is_null()).then_some(m)
    }

    pub fn call_int(&self, o: jobject, method: jmethodID, args: &[jvalue]) -> Option<jint> {
        let v = jni!(self, CallIntMethodA, o, method, args.as_ptr());
        (!self.clear_exception()).then_some(v)
    }

    pub fn call_long(&self, o: jobject, method: jmethodID, args: &[jvalue]) -> Option<jlong> {
        let v = jni!(self, CallLongMethodA, o, method, args.as_ptr());
        (!self.clear_exception()).then_some(v)
    }

    pub fn call_static_object(
        &self,
        class: jclass,
        method: jmethodID,
        args: &[jvalue],
    ) -> Option<jobject> {
        let v = jni!(self, CallStaticObjectMethodA, class, method, args.as_ptr());
        (!self.clear_exception() && !v.is_null()).then_some(v)
    }

    pub fn set_static_boolean(&self, class: jclass, field: jfieldID, value: bool) {
        jni!(self, SetStaticBooleanField, class, field, value as jboolean);
    }

    pub fn static_object(&self, class: jclass, field: jfieldID) -> jobject {
        jni!(self, GetStaticObjectField, class, field)
    }

    /// A `long[]` static field's contents (empty when the field is null).
    pub fn static_longs(&self, class: jclass, name: &str) -> Vec<i64> {
        let Some(f) = self.static_field(class, name, "[J") else {
            return Vec::new();
        };
        let array = self.static_object(class, f);
        let v = self.longs(array);
        self.delete_local(array);
        v
    }

    /// The `long[]` returned by a static method without arguments (empty when it fails or the class is null).
    pub fn static_call_longs(&self, class: jclass, name: &str) -> Vec<i64> {
        if class.is_null() {
            return Vec::new();
        }
        let Some(m) = self.static_method(class, name, "()[J") else {
            return Vec::new();
        };
        let Some(array) = self.call_static_object(class, m, &[]) else {
            return Vec::new();
        };
        let v = self.longs(array);
        self.delete_local(array);
        v
    }

    /// A `long[]`'s contents (empty for null).
    pub fn longs(&self, array: jobject) -> Vec<i64> {
        if array.is_null() {
            return Vec::new();
        }
        let n = jni!(self, GetArrayLength, array);
        let mut v = vec![0 as jlong; n as usize];
        jni!(self, GetLongArrayRegion, array, 0, n, v.as_mut_ptr());
        self.clear_exception();
        v
    }

    pub fn array_length(&self, array: jobject) -> jint {
        jni!(self, GetArrayLength, array)
    }

    pub fn object_array_element(&self, array: jobject, index: jint) -> jobject {
        let o = jni!(self, GetObjectArrayElement, array, index);
        if self.clear_exception() {
            ptr::null_mut()
        } else {
            o
        }
    }

    pub fn new_int_array(&self, n: jint) -> jobject {
        jni!(self, NewIntArray, n)
    }

    pub fn new_object_array(&self, n: jint, class: jclass) -> jobject {
        jni!(self, NewObjectArray, n, class, ptr::null_mut())
    }

    /// An instance of `class` with no constructor run; None (the exception cleared) when the class cannot
    /// have one (abstract, an interface, `java.lang.Class`) or memory is out.
    pub fn alloc_object(&self, class: jclass) -> Option<jobject> {
        let o = jni!(self, AllocObject, class);
        if self.clear_exception() || o.is_null() {
            None
        } else {
            Some(o)
        }
    }

    pub fn is_instance_of(&self, o: jobject, class: jclass) -> bool {
        jni!(self, IsInstanceOf, o, class) != 0
    }

    pub fn is_same_object(&self, a: jobject, b: jobject) -> bool {
        jni!(self, IsSameObject, a, b) != 0
    }

    pub fn new_global(&self, o: jobject) -> jobject {
        jni!(self, NewGlobalRef, o)
    }

    pub fn delete_local(&self, o: jobject) {
        if !o.is_null() {
            jni!(self, DeleteLocalRef, o);
        }
    }
}
