//! The C library calls the agent makes outside JNI and JVMTI.

#[repr(C)]
struct Timespec {
    tv_sec: i64,
    tv_nsec: i64,
}

extern "C" {
    fn clock_gettime(clock: i32, ts: *mut Timespec) -> i32;
}

/// Linux's per-thread CPU clock of the calling thread.
const CLOCK_THREAD_CPUTIME_ID: i32 = 3;

/// Linux's CPU clock of the whole process, every thread together.
const CLOCK_PROCESS_CPUTIME_ID: i32 = 2;

/// CPU time of the calling thread in nanoseconds (0 if the clock cannot be read). Async-signal-safe.
pub fn thread_cpu_now() -> i64 {
    cpu_now(CLOCK_THREAD_CPUTIME_ID)
}

/// CPU time of the process, all its threads, in nanoseconds (0 if the clock cannot be read).
pub fn process_cpu_now() -> i64 {
    cpu_now(CLOCK_PROCESS_CPUTIME_ID)
}

fn cpu_now(clock: i32) -> i64 {
    let mut ts = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the clock id is a constant Linux defines.
    if unsafe { clock_gettime(clock, &mut ts) } != 0 {
        return 0;
    }
    ts.tv_sec * 1_000_000_000 + ts.tv_nsec
}
