//! `start monitors` and `stop monitors` (`instr ctl`, `instr.Control`): the monitor profiler's four
//! events (contended enter and entered, wait and waited; monitors.rs) switched while the program runs.
//!
//! The events need `can_generate_monitor_events`, which HotSpot grants in the live phase, and the
//! owner lookup `can_get_monitor_info`, likewise: so an agent attached to a running VM, or loaded without
//! the thread profiler, gets a monitor profiler of its own at the first `start monitors`
//! (threads.rs, `install_monitors_only`). What needs the start-up capabilities (monitor dumps and
//! deadlock checks: `instr ctl PID threads`) stays with `threads=on` at start-up. The callbacks are
//! registered at load (lib.rs) whatever the options, since JVMTI takes one callback table; an event
//! that is off costs nothing, so `stop monitors` leaves nothing running.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use crate::ffi::Jni;
use crate::jvmti::{capability, event, ENABLE, ERROR_NONE};
use crate::state::{lock, Agent};

/// Whether the four monitor events are on.
static ON: AtomicBool = AtomicBool::new(false);
/// One switch at a time: the socket's thread and the Java API may ask together.
static SWITCHING: Mutex<()> = Mutex::new(());

const EVENTS: [u32; 4] = [
    event::MONITOR_CONTENDED_ENTER,
    event::MONITOR_CONTENDED_ENTERED,
    event::MONITOR_WAIT,
    event::MONITOR_WAITED,
];

/// At load: whether the options turned the events on.
pub fn init(on: bool) {
    ON.store(on, Ordering::Release);
}

pub fn is_on() -> bool {
    ON.load(Ordering::Acquire)
}

/// `start monitors`.
pub fn start(a: &Agent, jni: Jni) -> Result<String, String> {
    let _one_at_a_time = lock(&SWITCHING);
    if is_on() {
        return Ok("monitors was already on".into());
    }
    a.jvmti.add_live_capabilities(
        &[
            capability::GENERATE_MONITOR_EVENTS,
            capability::GET_MONITOR_INFO,
        ],
        "the monitor events",
    )?;
    let set_up = if crate::threads::profiler().is_none() {
        crate::threads::install_monitors_only(a.jvmti, &a.rules, jni);
        " (the monitor profiler set up; no monitor dumps or deadlock checks: those need threads=on at start-up)"
    } else {
        ""
    };
    for (k, e) in EVENTS.into_iter().enumerate() {
        if a.jvmti.set_event_notification_mode(e, ENABLE) != ERROR_NONE {
            for &on in &EVENTS[..k] {
                a.jvmti.set_event_notification_mode(on, 0);
            }
            return Err(format!("cannot enable JVMTI event {e}"));
        }
    }
    ON.store(true, Ordering::Release);
    Ok(format!(
        "monitors on: contention and waits counted from now{set_up}"
    ))
}

/// `stop monitors`.
pub fn stop(a: &Agent) -> Result<String, String> {
    let _one_at_a_time = lock(&SWITCHING);
    if !is_on() {
        return Ok("monitors was already off".into());
    }
    let t = a.rules.threads();
    if t.enabled && t.trace.is_some() {
        return Err(
            "monitors: the XML trace (trace=) records the monitor events; it runs for the life of the VM"
                .into(),
        );
    }
    for e in EVENTS {
        a.jvmti.set_event_notification_mode(e, 0);
    }
    crate::monitors::forget_pending();
    ON.store(false, Ordering::Release);
    Ok(
        "monitors off: the monitor events are disabled; what was counted stays in the reports"
            .into(),
    )
}
