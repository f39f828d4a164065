//! Symbols libjvm exports beside JNI and JVMTI: the serviceability agent's tables (read by vm_flags.rs),
//! `JVM_GC`, the entry behind `System.gc()`, and `JVM_GetManagement` (management.rs); and the addresses
//! of functions it does not export, from its file's symbol table, to check pointers it hands out.

use std::ffi::{CStr, OsStr};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

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

/// The run-time addresses of libjvm's functions `names`, which it need not export (`jmm_GetVersion`), from
/// the symbol table of the file the VM was loaded from; an error when that file has no symbol table (a
/// stripped build) or lists one of them not. Where the file's functions sit in memory is told by an
/// exported one, `JVM_GetManagement`, found both ways.
pub(super) fn local_functions<const N: usize>(names: [&str; N]) -> Result<[usize; N], String> {
    let anchor = symbol(c"JVM_GetManagement").ok_or("libjvm exports no JVM_GetManagement")?;
    let info = loaded_from(anchor)
        .filter(|i| !i.dli_fname.is_null())
        .ok_or("cannot tell which file libjvm was loaded from")?;
    // SAFETY: the name dladdr gives lives as long as the object, loaded for the life of the VM.
    let path = Path::new(OsStr::from_bytes(
        unsafe { CStr::from_ptr(info.dli_fname) }.to_bytes(),
    ))
    .to_owned();
    let mut wanted = vec!["JVM_GetManagement"];
    wanted.extend_from_slice(&names);
    let values = crate::elf_symbols::function_values(&path, &wanted)?;
    let missing = |i: usize| format!("{}: no {} in its symbol table", path.display(), wanted[i]);
    let bias = (anchor as u64).wrapping_sub(values[0].ok_or_else(|| missing(0))?);
    let mut addresses = [0; N];
    for (i, address) in addresses.iter_mut().enumerate() {
        *address = values[i + 1]
            .ok_or_else(|| missing(i + 1))?
            .wrapping_add(bias) as usize;
    }
    Ok(addresses)
}

/// Whether every pointer of `functions` points into libjvm (the object that exports `JVM_GetManagement`),
/// and the VM is HotSpot (it exports the serviceability agent's tables): what a table of HotSpot's
/// functions must satisfy before the agent calls one of them by its position alone.
pub(super) fn all_in_hotspot(functions: impl IntoIterator<Item = *const libc::c_void>) -> bool {
    let object_of = |at: *const libc::c_void| {
        loaded_from(at)
            .map(|i| i.dli_fbase as usize)
            .filter(|&base| base != 0)
    };
    let Some(libjvm) = symbol(c"JVM_GetManagement").and_then(|at| object_of(at)) else {
        return false;
    };
    symbol(c"gHotSpotVMStructs").is_some()
        && functions
            .into_iter()
            .all(|f| !f.is_null() && object_of(f) == Some(libjvm))
}

/// What the dynamic loader knows of the object `at` lies in (its file and base), if any.
fn loaded_from(at: *const libc::c_void) -> Option<libc::Dl_info> {
    // SAFETY: Dl_info is two pointers and two addresses, for which all zeros is a valid value.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only reads the loader's own records for `at`, which need not be valid.
    (unsafe { libc::dladdr(at, &mut info) } != 0).then_some(info)
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
