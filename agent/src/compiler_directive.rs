//! HotSpot's compiler directives (what `jcmd PID Compiler.directives_add|remove|print` manage), pushed and
//! popped by the agent itself through the JMM interface (ffi/management.rs), with no Java code: the
//! run-time form of the `-XX` flags that only the compilers' start-up reads. A directive comes from a JSON
//! file, which is written private to this user and removed once the VM has read it.

use std::ffi::{CStr, CString};
use std::fs;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;
use std::sync::Mutex;

use crate::ffi::{management, vm_flags, Jni};

/// Pushes a directive for every method that turns off, in C2, the intrinsics `list` names.
///
/// HotSpot (JDK 17 to 25) works out which intrinsics a directive turns off when it makes the directive, from
/// the global `DisableIntrinsic` flag as it is at that moment, and never reads the list the directive itself
/// gives (`CompilerDirectives`' constructor; the list is only printed). So the flag holds the list while
/// the command runs, and gets its value back after; the list is in the directive too, for a VM that
/// reads it. `-XX:CompilerDirectivesFile` with the same directive at start-up changes nothing, measured
/// with `-XX:+PrintIntrinsics` on 2026-11-29 (JDK 25). The directive also keeps the flag's pointer as the
/// value of the settings it does not give (its C1 half's list, which `Compiler.directives_print` prints),
/// so the list lives as long as the VM ([`lasting`]).
pub fn push_disabling(jni: Jni, list: &str) -> Result<(), String> {
    let flag = vm_flags::ccstr_flag("DisableIntrinsic")
        .ok_or("this VM does not describe its DisableIntrinsic flag")?;
    let list = lasting(list)?;
    let json = format!(
        "[{{\"match\": \"*.*\", \"c2\": {{\"DisableIntrinsic\": \"{}\"}}}}]\n",
        list.to_string_lossy()
    );
    let file = DirectiveFile::write(&json)?;
    let users_value = flag.replace(list.as_ptr());
    let said = run(
        jni,
        &format!("Compiler.directives_add {}", file.0.display()),
    );
    flag.replace(users_value);
    drop(file);
    let said = said?;
    if said.contains("added") && !said.contains("failed") {
        Ok(())
    } else {
        Err(format!(
            "Compiler.directives_add: {}",
            said.trim().replace('\n', " ")
        ))
    }
}

/// Pops the directive on top of the stack: the one pushed last, whoever pushed it (HotSpot's stack has no
/// way to name one).
pub fn pop(jni: Jni) -> Result<(), String> {
    run(jni, "Compiler.directives_remove").map(|_| ())
}

/// How many compiler directives are on the VM's stack, the default one included, if it says.
pub fn count(jni: Jni) -> Option<usize> {
    run(jni, "Compiler.directives_print")
        .ok()
        .map(|text| text.matches("Directive:").count())
}

/// Runs a diagnostic command as `jcmd` would, on this thread.
fn run(jni: Jni, line: &str) -> Result<String, String> {
    let jdk_feature = crate::state::agent().map_or(0, |a| a.jvmti.jdk_feature());
    management::diagnostic_command(jni, jdk_feature, line)
}

/// `list` as a C string that lives as long as the VM, made once per distinct list: the user's list does
/// not change while the VM runs, so there are at most two.
fn lasting(list: &str) -> Result<&'static CStr, String> {
    static MADE: Mutex<Vec<&'static CStr>> = Mutex::new(Vec::new());
    let mut made = MADE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(&s) = made.iter().find(|s| s.to_bytes() == list.as_bytes()) {
        return Ok(s);
    }
    let s: &'static CStr = Box::leak(
        CString::new(list)
            .map_err(|_| "the DisableIntrinsic flag holds a NUL")?
            .into_boxed_c_str(),
    );
    made.push(s);
    Ok(s)
}

/// The directive as a file only this user can read, which `Compiler.directives_add` takes, removed when
/// dropped: a new file of a name no one can guess, so that nothing another user put in the directory is
/// followed or stands in the way, in a directory without spaces, which the command's arguments cannot hold.
struct DirectiveFile(PathBuf);

impl DirectiveFile {
    fn write(json: &str) -> Result<DirectiveFile, String> {
        let temp = std::env::temp_dir();
        let dir = if temp.to_string_lossy().contains(char::is_whitespace) {
            PathBuf::from("/tmp")
        } else {
            temp
        };
        let mut last = String::new();
        for _ in 0..4 {
            let path = dir.join(format!(
                "instr-{}-{:016x}-directive.json",
                std::process::id(),
                unguessable()
            ));
            let opened = fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&path);
            match opened {
                Ok(mut f) => {
                    let file = DirectiveFile(path);
                    return match f.write_all(json.as_bytes()) {
                        Ok(()) => Ok(file),
                        Err(e) => Err(format!("{}: {e}", file.0.display())),
                    };
                }
                Err(e) => last = format!("{}: {e}", path.display()),
            }
        }
        Err(last)
    }
}

impl Drop for DirectiveFile {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.0);
    }
}

/// 64 bits from the kernel's random source, or from the clock where it cannot be read.
fn unguessable() -> u64 {
    let mut bytes = [0u8; 8];
    let read = fs::File::open("/dev/urandom")
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut bytes));
    match read {
        Ok(()) => u64::from_ne_bytes(bytes),
        Err(_) => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64),
    }
}
