//! Symbols libjvm exports beside JNI and JVMTI: the serviceability agent's tables (read by vm_flags.rs),
//! `JVM_GC`, the entry behind `System.gc()`, and `JVM_GetManagement` (management.rs).

use std::ffi::CStr;

use super::Jni;

/// The address of the symbol `name` of libjvm, if the VM exports it.
pub(super) fn symbol(name: &CStr) -> Option<*mut libc::c_void> {
    // SAFETY: dlsym with RTLD_DEFAULT and a NUL-terminated name only looks the symbol up.
    let mut at = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
    if at.is_null() {
        // A launcher that loaded libjvm RTLD_LOCAL: ask it by its soname, without loading anything.
        // SAFETY: RTLD_NOLOAD only returns a handle to a library already loaded, or null.
        let jvm =
            unsafe { libc::dlopen(c"libjvm.so".as_ptr(), libc::RTLD_NOW | libc::RTLD_NOLOAD) };
        if jvm.is_null() {
            return None;
        }
        // SAFETY: as above, on that library's handle; the close only drops the reference the open took,
        // and libjvm stays loaded by its launcher.
        unsafe {
            at = libc::dlsym(jvm, name.as_ptr());
            libc::dlclose(jvm);
        }
    }
    (!at.is_null()).then_some(at)
}

/// Reads the exported variable `name` of libjvm, of type T.
pub(super) fn variable<T: Copy>(name: &CStr) -> Option<T> {
    // SAFETY: the symbol is the variable of that name, exported with type T by every HotSpot.
    symbol(name).map(|at| unsafe { (at as *const T).read() })
}

/// What `System.gc()` does, without running Java code (which the probes could count): a collection with
/// the cause "System.gc()", which `-XX:+ExplicitGCInvokesConcurrent` makes a concurrent cycle on G1 and
/// `-XX:+DisableExplicitGC` makes nothing. Blocks until the collection (or the concurrent cycle) is over.
/// `_on` is the calling thread's JNI environment: JVM_GC must be called by a Java thread, which only a
/// thread holding one is. Returns false when the VM does not export it.
pub fn system_gc(_on: Jni) -> bool {
    let Some(at) = symbol(c"JVM_GC") else {
        return false;
    };
    // SAFETY: JVM_GC is `void JVM_GC(void)` in every HotSpot since JDK 1.2; the caller is a Java thread in
    // native code, as a JVM_ENTRY expects.
    unsafe { std::mem::transmute::<*mut libc::c_void, extern "C" fn()>(at)() };
    true
}
