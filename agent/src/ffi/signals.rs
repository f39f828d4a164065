//! The sampler's signal side (sampler.rs is the rest): the SIGPROF handler, AsyncGetCallTrace, the
//! per-thread CPU timers, `tgkill` for wall-clock samples, and the table from OS thread id to JNIEnv that
//! AsyncGetCallTrace needs.
//!
//! The handler runs on the sampled thread at any instruction, so it keeps to the async-signal-safe
//! subset (mod.rs): it reads the thread id with a system call, finds the thread's JNIEnv in a fixed table
//! of atomics (no thread-local storage: in a dlopen'ed library the first touch of a TLS block can call
//! malloc), walks the stack with AsyncGetCallTrace into a buffer on its own stack, and hands the frames to
//! the safe handler the sampler registered, which copies them into its preallocated ring. errno is saved
//! and restored, since the interrupted code may be between a call and its errno check.
//!
//! The handler is installed once and never removed: a SIGPROF still pending when sampling stops (a timer
//! that fired just before it was deleted) would otherwise kill the process with the default action.
//! Stopping turns the handler into a no-op instead.

use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicPtr, AtomicUsize, Ordering};

use jni_sys::{jint, JNIEnv};

use super::guard::{guard, Policy};
use super::jni::Jni;

/// What made the thread take the signal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trigger {
    /// Its CPU-time timer expired: the thread was running.
    Cpu,
    /// The wall-clock sampler sent it with `tgkill`, running or not.
    Wall,
}

/// One frame as AsyncGetCallTrace writes it (`ASGCT_CallFrame`): the bytecode index (negative for
/// native frames) and the jmethodID, as an address.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct RawFrame {
    pub bci: jint,
    pub method: usize,
}

/// `ASGCT_CallTrace`.
#[repr(C)]
struct CallTrace {
    env: *mut JNIEnv,
    num_frames: jint,
    frames: *mut RawFrame,
}

type AsyncGetCallTrace = unsafe extern "C" fn(*mut CallTrace, jint, *mut c_void);

/// The deepest stack walked; deeper stacks are cut at the top-most frames (AGCT fills from the leaf).
pub const MAX_FRAMES: usize = 128;

/// Why a signal produced no stack, beside AsyncGetCallTrace's own codes (0 and below).
pub const NO_ENV: i32 = 1;

/// What the handler hands over: the trigger, the OS thread id, the intervals the signal stands for, and
/// the frames (leaf first) or the failure code (AsyncGetCallTrace's `num_frames` when <= 0, or
/// [`NO_ENV`]). Must be async-signal-safe.
///
/// The intervals: Linux checks CPU-time timers at scheduler ticks (CONFIG_HZ, often 250 Hz), so a timer
/// of 1 ms fires once per tick and reports the expiries it missed as the signal's overrun count; the
/// sample then stands for 1 + overrun intervals of CPU time. A wall signal stands for one.
pub type SampleHandler = fn(Trigger, i32, u32, Result<&[RawFrame], i32>);

/// Where Linux x86-64 and aarch64 put `si_overrun` in a timer's siginfo: after si_signo, si_errno,
/// si_code, the padding int and si_tid.
const SI_OVERRUN_OFFSET: usize = 20;

static AGCT: AtomicUsize = AtomicUsize::new(0);
/// The VM, for the JNIEnv of a thread that is not in the table (`start cpu` in a running VM: the threads
/// alive then never ran a ThreadStart of the sampler's). Null: such signals count as [`NO_ENV`].
static JAVA_VM: AtomicPtr<jni_sys::JavaVM> = AtomicPtr::new(std::ptr::null_mut());
static HANDLER: AtomicUsize = AtomicUsize::new(0);
static ACTIVE: AtomicBool = AtomicBool::new(false);

/// Threads the table can hold at once. A thread that finds it full is not sampled (and is counted).
const TABLE: usize = 1 << 14;
const EMPTY: i32 = 0;
/// A slot whose thread ended: lookups probe past it, registrations reuse it.
const GONE: i32 = -1;
static TIDS: [AtomicI32; TABLE] = [const { AtomicI32::new(EMPTY) }; TABLE];
static ENVS: [AtomicPtr<JNIEnv>; TABLE] = [const { AtomicPtr::new(std::ptr::null_mut()) }; TABLE];

fn home(tid: i32) -> usize {
    (tid as u32).wrapping_mul(0x9E37_79B1) as usize % TABLE
}

fn env_of(tid: i32) -> *mut JNIEnv {
    for k in 0..TABLE {
        let i = (home(tid) + k) % TABLE;
        match TIDS[i].load(Ordering::Acquire) {
            EMPTY => break,
            t if t == tid => return ENVS[i].load(Ordering::Acquire),
            _ => {}
        }
    }
    std::ptr::null_mut()
}

/// The calling thread's OS id. Async-signal-safe.
pub fn current_tid() -> i32 {
    // SAFETY: gettid has no arguments and cannot fail.
    unsafe { libc::syscall(libc::SYS_gettid) as i32 }
}

/// Ok when SIGPROF has no handler, or has the agent's: another profiler in the process (JFR's CPU-time
/// sampler on JDK 25, async-profiler) may own it, and taking it over would send its timers' signals to
/// the agent's handler and the agent's to nobody.
pub fn sigprof_is_free() -> Result<(), String> {
    // SAFETY: a zeroed sigaction is valid; a null new action only reads the current one.
    let current = unsafe {
        let mut current: libc::sigaction = std::mem::zeroed();
        if libc::sigaction(libc::SIGPROF, std::ptr::null(), &mut current) != 0 {
            return Err(format!(
                "cannot read the SIGPROF handler: {}",
                std::io::Error::last_os_error()
            ));
        }
        current.sa_sigaction
    };
    if [
        libc::SIG_DFL,
        libc::SIG_IGN,
        on_sigprof as *const () as usize,
    ]
    .contains(&current)
    {
        Ok(())
    } else {
        Err(
            "another handler already owns SIGPROF (JFR's CPU-time sampler or another profiler): stop it \
             first, or load the agent with engine=jvmti"
                .into(),
        )
    }
}

/// Finds AsyncGetCallTrace in the VM and installs the SIGPROF handler, which calls `handler` for each
/// signal while sampling is active. Err: one line saying what is missing.
pub fn install(handler: SampleHandler) -> Result<(), String> {
    // SAFETY: dlsym with RTLD_DEFAULT and a NUL-terminated name only looks the symbol up.
    let agct = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"AsyncGetCallTrace".as_ptr()) };
    if agct.is_null() {
        return Err("this VM does not export AsyncGetCallTrace; use engine=jvmti".into());
    }
    sigprof_is_free()?;
    AGCT.store(agct as usize, Ordering::Release);
    HANDLER.store(handler as usize, Ordering::Release);
    // SAFETY: a zeroed sigaction is valid; the handler has the SA_SIGINFO signature.
    let installed = unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_sigprof as *const () as usize;
        action.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(libc::SIGPROF, &action, std::ptr::null_mut())
    };
    if installed != 0 {
        return Err(format!(
            "cannot install the SIGPROF handler: {}",
            std::io::Error::last_os_error()
        ));
    }
    ACTIVE.store(true, Ordering::Release);
    Ok(())
}

/// From now on a SIGPROF does nothing (the handler stays installed, see the module comment).
pub fn stop() {
    ACTIVE.store(false, Ordering::Release);
}

pub fn active() -> bool {
    ACTIVE.load(Ordering::Acquire)
}

/// Records the calling thread's JNIEnv under its OS id, so that its signals can be walked; false when
/// the table is full. Must run on the thread itself (ThreadStart, VMInit), before any of its signals.
pub fn register_current_thread(jni: Jni) -> bool {
    let tid = current_tid();
    for k in 0..TABLE {
        let i = (home(tid) + k) % TABLE;
        let t = TIDS[i].load(Ordering::Acquire);
        if t == tid {
            ENVS[i].store(jni.0, Ordering::Release);
            return true;
        }
        if (t == EMPTY || t == GONE)
            && TIDS[i]
                .compare_exchange(t, tid, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
        {
            ENVS[i].store(jni.0, Ordering::Release);
            return true;
        }
    }
    false
}

/// Forgets the calling thread (ThreadEnd): a signal that still reaches it finds no JNIEnv.
pub fn unregister_current_thread() {
    let tid = current_tid();
    for k in 0..TABLE {
        let i = (home(tid) + k) % TABLE;
        match TIDS[i].load(Ordering::Acquire) {
            EMPTY => return,
            t if t == tid => {
                ENVS[i].store(std::ptr::null_mut(), Ordering::Release);
                TIDS[i].store(GONE, Ordering::Release);
                return;
            }
            _ => {}
        }
    }
}

/// Appends the OS ids of every registered thread to `out` (the wall sampler's list).
pub fn registered_threads(out: &mut Vec<i32>) {
    for (t, e) in TIDS.iter().zip(&ENVS) {
        let tid = t.load(Ordering::Acquire);
        if tid > 0 && !e.load(Ordering::Acquire).is_null() {
            out.push(tid);
        }
    }
}

/// A CPU-time timer of the calling thread, delivering SIGPROF to this very thread every `interval_ns`
/// of its CPU time. The id to disarm it with, or the OS error.
pub fn arm_cpu_timer(interval_ns: u64) -> Result<usize, String> {
    arm_timer(libc::CLOCK_THREAD_CPUTIME_ID, current_tid(), interval_ns)
}

/// A timer on `clock` sending SIGPROF to thread `tid` every `interval_ns` of that clock.
fn arm_timer(clock: libc::clockid_t, tid: i32, interval_ns: u64) -> Result<usize, String> {
    // SAFETY: a zeroed sigevent is valid; the fields set are those SIGEV_THREAD_ID reads.
    let mut event: libc::sigevent = unsafe { std::mem::zeroed() };
    event.sigev_notify = libc::SIGEV_THREAD_ID;
    event.sigev_signo = libc::SIGPROF;
    event.sigev_notify_thread_id = tid;
    let mut timer: libc::timer_t = std::ptr::null_mut();
    // SAFETY: valid pointers to an initialised sigevent and to the timer id to fill.
    if unsafe { libc::timer_create(clock, &mut event, &mut timer) } != 0 {
        return Err(std::io::Error::last_os_error().to_string());
    }
    let period = libc::timespec {
        tv_sec: (interval_ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (interval_ns % 1_000_000_000) as libc::c_long,
    };
    let spec = libc::itimerspec {
        it_interval: period,
        it_value: period,
    };
    // SAFETY: `timer` was just created; `spec` is a valid itimerspec.
    if unsafe { libc::timer_settime(timer, 0, &spec, std::ptr::null_mut()) } != 0 {
        let e = std::io::Error::last_os_error().to_string();
        // SAFETY: as above.
        unsafe { libc::timer_delete(timer) };
        return Err(e);
    }
    Ok(timer as usize)
}

/// Deletes a timer [`arm_cpu_timer`] made (from any thread of the process).
pub fn disarm_cpu_timer(timer: usize) {
    // SAFETY: `timer` is an id timer_create returned and that was not deleted yet (the sampler takes it
    // out of its table before calling this).
    unsafe { libc::timer_delete(timer as libc::timer_t) };
}

/// Sends SIGPROF to thread `tid` of this process; false when it is gone.
pub fn signal_thread(tid: i32) -> bool {
    // SAFETY: tgkill takes plain integers; a thread that has ended gives ESRCH.
    unsafe { libc::syscall(libc::SYS_tgkill, libc::getpid(), tid, libc::SIGPROF) == 0 }
}

/// Lets the handler ask the VM for the JNIEnv of a thread the table does not hold (see [`JAVA_VM`]).
pub fn find_unregistered_threads(vm: *mut jni_sys::JavaVM) {
    JAVA_VM.store(vm, Ordering::Release);
}

/// The calling thread's JNIEnv from the VM's GetEnv, or null (no VM given, or not a Java thread).
/// GetEnv takes no lock and reads the VM's own thread-local, as profilers built on AsyncGetCallTrace have
/// long relied on. libjvm's thread-locals are of the general-dynamic model (Debian's 17 and Temurin's 25:
/// DTPMOD64 relocations, no TPOFF64), which glibc may allocate at a thread's first access: harmless on a
/// Java thread, which the VM set up, so timers are armed only on threads known to be Java threads
/// (cpu_switch.rs).
fn env_from_vm() -> *mut JNIEnv {
    let vm = JAVA_VM.load(Ordering::Acquire);
    if vm.is_null() {
        return std::ptr::null_mut();
    }
    let mut env: *mut c_void = std::ptr::null_mut();
    // SAFETY: `vm` is the VM's JavaVM (alive for the process); GetEnv writes the env or leaves it null.
    let ok = unsafe {
        match (**vm).GetEnv {
            Some(get) => get(vm, &mut env, jni_sys::JNI_VERSION_1_6) == jni_sys::JNI_OK,
            None => false,
        }
    };
    if ok {
        env.cast()
    } else {
        std::ptr::null_mut()
    }
}

/// A CPU-time timer of thread `tid` of this process (any thread may make it): SIGPROF to that thread
/// every `interval_ns` of its CPU time. For the threads alive when `start cpu` came, which cannot make
/// their own. The id to disarm it with, or the OS error (the thread has ended).
pub fn arm_cpu_timer_of(tid: i32, interval_ns: u64) -> Result<usize, String> {
    // Linux's clock id of a thread's CPU time: the bits of ~tid above CPUCLOCK_PERTHREAD_MASK (4) and
    // CPUCLOCK_SCHED (2), as glibc's pthread_getcpuclockid builds it.
    let clock = ((!(tid as libc::clockid_t)) << 3) | 6;
    arm_timer(clock, tid, interval_ns)
}

unsafe extern "system" fn on_sigprof(
    _signal: c_int,
    info: *mut libc::siginfo_t,
    context: *mut c_void,
) {
    const P: Policy = Policy::counted("SIGPROF");
    // SAFETY: errno is the calling thread's; it is put back as it was before returning.
    let errno = unsafe { *libc::__errno_location() };
    guard(P, (), || {
        if !ACTIVE.load(Ordering::Acquire) {
            return;
        }
        let handler = HANDLER.load(Ordering::Acquire);
        let agct = AGCT.load(Ordering::Acquire);
        if handler == 0 || agct == 0 || info.is_null() {
            return;
        }
        // SAFETY: HANDLER only ever holds a SampleHandler (install).
        let handler: SampleHandler =
            unsafe { std::mem::transmute::<usize, SampleHandler>(handler) };
        // SAFETY: the kernel passes a valid siginfo to an SA_SIGINFO handler.
        let code = unsafe { (*info).si_code };
        let trigger = if code == libc::SI_TKILL {
            Trigger::Wall
        } else {
            Trigger::Cpu
        };
        let weight = if code == libc::SI_TIMER {
            // SAFETY: a timer's siginfo holds si_overrun at this offset (the kernel's layout).
            let overrun = unsafe { *((info as *const u8).add(SI_OVERRUN_OFFSET) as *const c_int) };
            1 + overrun.clamp(0, 1 << 14) as u32
        } else {
            1
        };
        let tid = current_tid();
        let mut env = env_of(tid);
        if env.is_null() {
            env = env_from_vm();
        }
        if env.is_null() {
            handler(trigger, tid, weight, Err(NO_ENV));
            return;
        }
        let mut frames = [RawFrame::default(); MAX_FRAMES];
        let mut trace = CallTrace {
            env,
            num_frames: 0,
            frames: frames.as_mut_ptr(),
        };
        // SAFETY: AGCT is the VM's AsyncGetCallTrace; `trace` points at MAX_FRAMES writable frames and
        // `context` is the ucontext the kernel passed.
        unsafe {
            let walk = std::mem::transmute::<usize, AsyncGetCallTrace>(agct);
            walk(&mut trace, MAX_FRAMES as jint, context);
        }
        let n = trace.num_frames;
        if n > 0 {
            handler(
                trigger,
                tid,
                weight,
                Ok(&frames[..(n as usize).min(MAX_FRAMES)]),
            );
        } else {
            handler(trigger, tid, weight, Err(n));
        }
    });
    // SAFETY: as above.
    unsafe { *libc::__errno_location() = errno };
}
