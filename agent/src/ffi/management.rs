//! HotSpot's management interface (`jmm.h`), which libjvm hands out through `JVM_GetManagement` to the
//! JDK's own `java.management` module. The agent uses one function of it: running a diagnostic command,
//! what `jcmd PID COMMAND` runs, from native code, so that no Java code runs for it (the probes would
//! count its objects) and no `java.management` class is loaded.
//!
//! The interface is a table of function pointers whose layout changes with the JMM version it reports
//! (slot 2, `GetVersion`, in all of them). Read on 2026-11-29 from the tables of Debian's JDK 17.0 and
//! Temurin 25.0.3, against the names of libjvm's own symbols (`nm`), `ExecuteDiagnosticCommand` is:
//! - slot 38 in version 3 as JDK 14 and later lay it out (slot 1 reserved, null);
//! - slot 39 in version 4 (JDK 21 and later), which added `GetTotalThreadAllocatedMemory` at slot 9.
//!
//! Any other table is refused rather than guessed at: JDK 11's version 3 has a function in slot 1 and
//! `ExecuteDiagnosticCommand` in slot 37.

use std::ffi::c_void;

use jni_sys::{jint, jobject, jstring, JNIEnv};

use super::jni::{jni, Jni};
use super::libjvm::symbol;

/// The versions asked for, newest first: JDK 21+ (4), JDK 14+ and 11.0.9+ (3).
const VERSIONS: [jint; 2] = [0x2004_0000, 0x2003_0000];
const SLOT_RESERVED: usize = 1;
const SLOT_GET_VERSION: usize = 2;

type GetManagement = unsafe extern "system" fn(jint) -> *mut c_void;
type GetVersion = unsafe extern "system" fn(*mut JNIEnv) -> jint;
type ExecuteDiagnosticCommand = unsafe extern "system" fn(*mut JNIEnv, jstring) -> jstring;

/// The management table and its `ExecuteDiagnosticCommand`, if this VM has a table whose layout is known.
fn execute_diagnostic_command(jni: Jni) -> Result<ExecuteDiagnosticCommand, String> {
    let get = symbol(c"JVM_GetManagement")
        .ok_or("this VM exports no JVM_GetManagement (not HotSpot?)")?;
    // SAFETY: JVM_GetManagement is `void* JVM_GetManagement(jint version)` in every HotSpot since JDK 5.
    let get = unsafe { std::mem::transmute::<*mut c_void, GetManagement>(get) };
    let table = VERSIONS
        .iter()
        // SAFETY: the function only compares the version and returns its static table or null.
        .map(|&v| unsafe { get(v) } as *const *const c_void)
        .find(|t| !t.is_null())
        .ok_or("the VM's management interface is of no known version")?;
    // SAFETY: every version of the table has GetVersion in slot 2, set; the caller is a Java thread.
    let version = unsafe {
        let f = table.add(SLOT_GET_VERSION).read();
        if f.is_null() {
            return Err("the VM's management interface has no GetVersion".into());
        }
        std::mem::transmute::<*const c_void, GetVersion>(f)(jni.0)
    };
    // SAFETY: every version of the table is longer than two slots.
    let reserved = unsafe { table.add(SLOT_RESERVED).read() };
    let slot = match version >> 16 {
        0x2003 if reserved.is_null() => 38,
        0x2004 => 39,
        _ => {
            return Err(format!(
            "the VM's management interface is of version {version:#x}, whose layout is not known"
        ))
        }
    };
    // SAFETY: the table has `slot` in this version (above).
    let f = unsafe { table.add(slot).read() };
    if f.is_null() {
        return Err(format!(
            "the VM's management interface has no function in slot {slot}"
        ));
    }
    // SAFETY: `slot` is ExecuteDiagnosticCommand's in this version's table, and it is set.
    Ok(unsafe { std::mem::transmute::<*const c_void, ExecuteDiagnosticCommand>(f) })
}

/// Runs the diagnostic command `line` (`Compiler.directives_add /path`) and returns what it printed. On a
/// Java thread, outside any probe: the VM runs the command on this thread. The command's failure (an
/// exception in the VM) is returned as the exception's text, and cleared.
pub fn diagnostic_command(jni: Jni, line: &str) -> Result<String, String> {
    let execute = execute_diagnostic_command(jni)?;
    let command = jni
        .new_string(line)
        .ok_or("cannot make the command's String")?;
    // SAFETY: the function takes this thread's JNIEnv and a local reference to the command line.
    let output = unsafe { execute(jni.0, command) };
    jni.delete_local(command);
    if jni.exception_pending() {
        return Err(pending_exception_text(jni));
    }
    let text = jni.string(output).unwrap_or_default();
    if !output.is_null() {
        jni.delete_local(output);
    }
    Ok(text)
}

/// The pending exception's `toString()`, and the exception cleared.
fn pending_exception_text(jni: Jni) -> String {
    let thrown: jobject = jni!(jni, ExceptionOccurred);
    jni!(jni, ExceptionClear);
    let class = jni.object_class(thrown);
    let text = jni
        .method(class, "toString", "()Ljava/lang/String;")
        .and_then(|to_string| {
            let s = jni!(jni, CallObjectMethodA, thrown, to_string, std::ptr::null());
            jni.clear_exception();
            let text = jni.string(s);
            if !s.is_null() {
                jni.delete_local(s);
            }
            text
        })
        .unwrap_or_else(|| "an exception without a text".into());
    jni.delete_local(class);
    jni.delete_local(thrown);
    text
}
