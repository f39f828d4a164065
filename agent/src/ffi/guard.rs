//! The one panic guard. A Rust panic must never unwind into the VM (undefined behaviour, in practice an
//! abort of the whole JVM), so every entry point — JVMTI callback, JNI native, agent thread, wrapped JNI
//! function, `Agent_OnLoad` — runs its body through [`guard`] with a [`Policy`]: what the entry point
//! returns when its body panicked, and whether the panic is reported.
//!
//! Reporting is one `instr:` line per entry point, the first time only: a probe that panics on every
//! allocation must not flood the program's stderr. The panic hook installed at load keeps Rust's own
//! "thread panicked at" text off the program's stderr and hands the message to the guard instead.

use std::cell::RefCell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};

/// How an entry point behaves when its body panics.
#[derive(Clone, Copy)]
pub struct Policy {
    /// The entry point's name in the `instr:` line (the JVMTI event or the Java native).
    pub entry: &'static str,
    /// What the program loses, said in the line: "allocation counts may be incomplete".
    pub consequence: &'static str,
    pub report: Report,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Report {
    /// One line on stderr the first time this entry point panics.
    Once,
    /// Counted only ([`panics`]): contexts that must not write (a signal handler; inside a GC pause the
    /// line is still safe to write, but a second one per pause would not be).
    Counted,
}

impl Policy {
    pub const fn once(entry: &'static str, consequence: &'static str) -> Policy {
        Policy {
            entry,
            consequence,
            report: Report::Once,
        }
    }

    pub const fn counted(entry: &'static str) -> Policy {
        Policy {
            entry,
            consequence: "",
            report: Report::Counted,
        }
    }
}

/// Runs `body`; on a panic returns `fallback` and reports as `policy` says. Never unwinds.
pub fn guard<R>(policy: Policy, fallback: R, body: impl FnOnce() -> R) -> R {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(r) => r,
        Err(_) => {
            PANICS.fetch_add(1, Ordering::Relaxed);
            if policy.report == Report::Once && first_time(policy.entry) {
                // Printing could itself panic (a closed stderr): that must not unwind either.
                let _ = catch_unwind(|| {
                    let message = LAST_PANIC
                        .with(|m| m.borrow_mut().take())
                        .unwrap_or_default();
                    eprintln!(
                        "instr: internal error in {}: {message}; {}",
                        policy.entry, policy.consequence
                    );
                });
            }
            fallback
        }
    }
}

/// Panics caught by every guard since the agent loaded (the reports show it when not 0).
pub fn panics() -> u64 {
    PANICS.load(Ordering::Relaxed)
}

static PANICS: AtomicU64 = AtomicU64::new(0);

thread_local! {
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Keeps the default hook's text off the program's stderr; the guard prints its own line.
pub fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let payload = info.payload();
        let text = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "panic".to_string());
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        let _ = LAST_PANIC.try_with(|m| {
            if let Ok(mut m) = m.try_borrow_mut() {
                *m = Some(format!("{text}{at}"));
            }
        });
    }));
}

/// Entry points that have reported, by the address of their name: a fixed table, so that reporting
/// allocates and locks nothing.
static REPORTED: [AtomicPtr<u8>; 64] = [const { AtomicPtr::new(std::ptr::null_mut()) }; 64];

fn first_time(entry: &'static str) -> bool {
    let key = entry.as_ptr() as *mut u8;
    for slot in &REPORTED {
        match slot.compare_exchange(
            std::ptr::null_mut(),
            key,
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            Ok(_) => return true,
            Err(existing) if existing == key => return false,
            Err(_) => continue,
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: Policy = Policy::once("TestEntry", "nothing is lost in a test");

    #[test]
    fn a_panic_returns_the_fallback_and_is_reported_once() {
        install_panic_hook();
        let before = panics();
        assert_eq!(guard(P, 7, || panic!("boom")), 7);
        assert_eq!(guard(P, 8, || -> i32 { panic!("again") }), 8);
        assert_eq!(guard(P, 0, || 5), 5);
        assert_eq!(panics() - before, 2);
        assert!(
            !first_time("TestEntry"),
            "the first panic already reported this entry"
        );
    }
}
