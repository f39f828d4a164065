//! The VM itself: `Agent_OnLoad` and `Agent_OnAttach`, the `JavaVM` handle, and global references.

use std::ffi::{c_char, c_void, CStr};

use jni_sys::{jint, jobject, JavaVM, JNI_ERR, JNI_OK};

use super::guard::{guard, Policy};
use super::jni::Jni;
use super::jvmti::{Env, Jvmti, VERSION_1_2};

/// The VM, to find the JNI environment of a thread a callback gives none (DataDumpRequest).
pub struct JavaVm(*mut JavaVM);
// SAFETY: the JavaVM pointer is valid for the life of the VM and on every thread.
unsafe impl Send for JavaVm {}
unsafe impl Sync for JavaVm {}

impl JavaVm {
    /// The current thread's JNI environment, if the thread is attached.
    pub fn jni(&self) -> Option<Jni> {
        let mut env: *mut c_void = std::ptr::null_mut();
        // SAFETY: a valid JavaVM; GetEnv only reads the current thread's attachment.
        let rc = unsafe { ((**self.0).GetEnv?)(self.0, &mut env, jni_sys::JNI_VERSION_1_8) };
        // SAFETY: GetEnv returned the environment of this thread.
        (rc == JNI_OK && !env.is_null()).then(|| unsafe { Jni::from_raw(env.cast()) })
    }

    /// The raw handle (for the sampler's signal handler, which may call no wrapper).
    pub fn raw(&self) -> *mut JavaVM {
        self.0
    }

    /// Attaches the calling native thread to the VM as a daemon named `name`; None if the VM refuses
    /// (it is not live any more). The thread must [`JavaVm::detach`] before it blocks outside the VM
    /// again: an attached thread in native code holds up the VM's exit (see control.rs).
    pub fn attach_daemon(&self, name: &CStr) -> Option<Jni> {
        let mut env: *mut c_void = std::ptr::null_mut();
        let mut args = jni_sys::JavaVMAttachArgs {
            version: jni_sys::JNI_VERSION_1_8,
            name: name.as_ptr() as *mut c_char,
            group: std::ptr::null_mut(),
        };
        // SAFETY: a valid JavaVM; the arguments outlive the call, which copies the name.
        let rc = unsafe {
            ((**self.0).AttachCurrentThreadAsDaemon?)(
                self.0,
                &mut env,
                (&mut args as *mut jni_sys::JavaVMAttachArgs).cast(),
            )
        };
        // SAFETY: the environment the VM just gave this thread.
        (rc == JNI_OK && !env.is_null()).then(|| unsafe { Jni::from_raw(env.cast()) })
    }

    /// Detaches the calling thread, which [`JavaVm::attach_daemon`] attached and which has no Java frame.
    pub fn detach(&self) {
        // SAFETY: a valid JavaVM; the caller attached this thread itself and holds no JNI reference.
        if let Some(detach) = unsafe { (**self.0).DetachCurrentThread } {
            // SAFETY: as above.
            unsafe { detach(self.0) };
        }
    }

    /// A JVMTI 1.2 environment for the agent.
    pub fn jvmti(&self) -> Result<Jvmti, String> {
        let mut env: *mut c_void = std::ptr::null_mut();
        // SAFETY: a valid JavaVM, as passed to Agent_OnLoad.
        let rc = unsafe { ((**self.0).GetEnv.ok_or("no GetEnv")?)(self.0, &mut env, VERSION_1_2) };
        if rc != JNI_OK || env.is_null() {
            return Err(format!("JVMTI 1.2 is not available (GetEnv returned {rc})"));
        }
        // SAFETY: GetEnv returned a JVMTI environment, valid for the life of the VM.
        Ok(unsafe { Jvmti::from_raw(env as Env) })
    }
}

/// A JNI global reference, usable from any thread.
#[derive(Clone, Copy)]
pub struct GlobalRef(pub jobject);
// SAFETY: global references are valid on every thread until deleted.
unsafe impl Send for GlobalRef {}

/// What `Agent_OnLoad` and `Agent_OnAttach` run: the agent's set-up, given the VM and the option string.
pub type Load = fn(JavaVm, &str) -> Result<(), String>;

/// The VM loads the agent. A refusal is one `instr:` line and JNI_ERR, which stops the VM cleanly.
///
/// # Safety
/// Called by the JVM with a valid `JavaVM` and a NUL-terminated option string (or null).
#[no_mangle]
pub unsafe extern "system" fn Agent_OnLoad(
    vm: *mut JavaVM,
    options: *mut c_char,
    _reserved: *mut c_void,
) -> jint {
    const P: Policy = Policy::once("Agent_OnLoad", "the VM is not started");
    // SAFETY: the VM's arguments, passed on unchanged.
    guard(P, JNI_ERR, || unsafe { set_up(vm, options, crate::load) })
}

/// The VM loads the agent into a running program (`instr attach`, `jcmd PID JVMTI.agent_load`). A refusal
/// is one `instr:` line on the program's stderr and JNI_ERR, which the attaching tool reports; the program
/// runs on either way.
///
/// # Safety
/// Called by the JVM with a valid `JavaVM` and a NUL-terminated option string (or null).
#[no_mangle]
pub unsafe extern "system" fn Agent_OnAttach(
    vm: *mut JavaVM,
    options: *mut c_char,
    _reserved: *mut c_void,
) -> jint {
    const P: Policy = Policy::once("Agent_OnAttach", "the agent is not attached");
    // SAFETY: the VM's arguments, passed on unchanged.
    guard(P, JNI_ERR, || unsafe {
        set_up(vm, options, crate::attach::attach)
    })
}

/// Both entry points: the option string decoded, the set-up run, a refusal as one `instr:` line.
///
/// # Safety
/// `vm` is the VM's valid `JavaVM`; `options` is null or NUL-terminated.
unsafe fn set_up(vm: *mut JavaVM, options: *mut c_char, run: Load) -> jint {
    super::guard::install_panic_hook();
    // SAFETY: the caller's contract.
    let options = unsafe { option_string(options) };
    match run(JavaVm(vm), &options) {
        Ok(()) => JNI_OK,
        Err(message) => {
            eprintln!("instr: {message}");
            JNI_ERR
        }
    }
}

/// The option string the VM passes, lossily decoded (options.rs refuses what the decoding replaced).
///
/// # Safety
/// `options` is null or NUL-terminated.
unsafe fn option_string(options: *mut c_char) -> String {
    if options.is_null() {
        String::new()
    } else {
        // SAFETY: the caller's contract.
        unsafe { CStr::from_ptr(options) }
            .to_string_lossy()
            .into_owned()
    }
}
