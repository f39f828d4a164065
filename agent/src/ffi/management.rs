//! HotSpot's management interface (`jmm.h`), which libjvm hands out through `JVM_GetManagement` to the
//! JDK's own `java.management` module. The agent uses one function of it: running a diagnostic command,
//! what `jcmd PID COMMAND` runs, from native code, so that no Java code runs for it (the probes would
//! count its objects) and no `java.management` class is loaded.
//!
//! The interface is a table of function pointers whose layout changes from one JDK to another, so the slot
//! of `ExecuteDiagnosticCommand` is not taken on trust: it is the slot that holds the address of libjvm's
//! own `jmm_ExecuteDiagnosticCommand`, read from the symbol table of the libjvm.so file the VM runs
//! (`nm` lists it; Debian's and Temurin's builds keep that table), after the table's `GetVersion` (slot 2
//! in every version) has been checked the same way, which proves the file is the one loaded.
//!
//! A build stripped of its symbol table falls back on the layouts read on 2026-11-29 from Debian's
//! JDK 17.0 and Temurin 25.0.3 against `nm`, and only on the JDK releases they cover:
//! - version 3 as JDK 14 to 20 lay it out (slot 1 reserved, null): slot 38;
//! - version 4 (JDK 21 to 25), which added `GetTotalThreadAllocatedMemory` at slot 9: slot 39.
//!
//! and only when the VM is HotSpot and every slot from `GetVersion` to the command's points into libjvm.
//! Anything else is refused rather than guessed at, since a wrong slot calls some other function with
//! arguments it does not take: JDK 11's version 3 has a function in slot 1 and the command in slot 37, and
//! a release after 25 may move it again.

use std::ffi::c_void;
use std::sync::OnceLock;

use jni_sys::{jint, jobject, jstring, JNIEnv};

use super::jni::{jni, Jni};
use super::libjvm::{all_in_hotspot, local_functions, symbol};

/// The versions asked for, newest first: JDK 21+ (4), JDK 14+ and 11.0.9+ (3).
const VERSIONS: [jint; 2] = [0x2004_0000, 0x2003_0000];
const SLOT_RESERVED: usize = 1;
const SLOT_GET_VERSION: usize = 2;
/// How far the table is searched for the function: past the last slot of any version so far (40 in
/// version 4). The table is a static of libjvm, so the slots after it are libjvm's data, readable.
const SLOTS_SEARCHED: usize = 48;
/// The newest JDK release whose table layout is known without a symbol table.
const NEWEST_KNOWN_LAYOUT: u32 = 25;

type GetManagement = unsafe extern "system" fn(jint) -> *mut c_void;
type GetVersion = unsafe extern "system" fn(*mut JNIEnv) -> jint;
type ExecuteDiagnosticCommand = unsafe extern "system" fn(*mut JNIEnv, jstring) -> jstring;

/// `ExecuteDiagnosticCommand`, found once per VM: the table and libjvm do not change while it runs.
fn execute_diagnostic_command(
    jni: Jni,
    jdk_feature: u32,
) -> Result<ExecuteDiagnosticCommand, String> {
    static FOUND: OnceLock<Result<usize, String>> = OnceLock::new();
    let f = FOUND
        .get_or_init(|| find_execute_diagnostic_command(jni, jdk_feature).map(|f| f as usize))
        .clone()?;
    // SAFETY: `f` is the address of ExecuteDiagnosticCommand, checked by name or by a known layout.
    Ok(unsafe { std::mem::transmute::<usize, ExecuteDiagnosticCommand>(f) })
}

fn find_execute_diagnostic_command(jni: Jni, jdk_feature: u32) -> Result<*const c_void, String> {
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
    // SAFETY: every version of the table has more than SLOT_GET_VERSION slots.
    let get_version = unsafe { table.add(SLOT_GET_VERSION).read() };
    let slot = match local_functions(["jmm_GetVersion", "jmm_ExecuteDiagnosticCommand"]) {
        Ok([named_get_version, named_execute]) => {
            if get_version as usize != named_get_version {
                return Err(
                    "the VM's management interface does not match libjvm's symbol table".into(),
                );
            }
            // SAFETY: the table is a static in libjvm's data, readable for SLOTS_SEARCHED slots.
            (0..SLOTS_SEARCHED)
                .find(|&i| unsafe { table.add(i).read() } as usize == named_execute)
                .ok_or("the VM's management interface has no ExecuteDiagnosticCommand")?
        }
        Err(why) if jdk_feature == 0 || jdk_feature > NEWEST_KNOWN_LAYOUT => {
            return Err(format!(
                "cannot check the layout of JDK {jdk_feature}'s management interface ({why})"
            ))
        }
        Err(why) => {
            let not_hotspot = || format!("the management interface is not HotSpot's ({why})");
            if !all_in_hotspot([get_version]) {
                return Err(not_hotspot());
            }
            // SAFETY: slot 2 is GetVersion in every version, a function of libjvm (above); the caller is a
            // Java thread.
            let version =
                unsafe { std::mem::transmute::<*const c_void, GetVersion>(get_version)(jni.0) };
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
            // Reserved slots are null; every function up to the command's must be libjvm's.
            // SAFETY: the table has `slot` slots in this version's layout.
            let functions = (SLOT_GET_VERSION..=slot).map(|i| unsafe { table.add(i).read() });
            if !all_in_hotspot(functions.filter(|f| !f.is_null())) {
                return Err(not_hotspot());
            }
            slot
        }
    };
    // SAFETY: the table has `slot` (found in it, or in this version's layout).
    let f = unsafe { table.add(slot).read() };
    if f.is_null() {
        return Err(format!(
            "the VM's management interface has no function in slot {slot}"
        ));
    }
    Ok(f)
}

/// Runs the diagnostic command `line` (`Compiler.directives_add /path`) and returns what it printed. On a
/// Java thread, outside any probe: the VM runs the command on this thread. The command's failure (an
/// exception in the VM) is returned as the exception's text, and cleared.
/// `jdk_feature` is the JDK's release (0 when unknown), for a libjvm without a symbol table.
pub fn diagnostic_command(jni: Jni, jdk_feature: u32, line: &str) -> Result<String, String> {
    let execute = execute_diagnostic_command(jni, jdk_feature)?;
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
