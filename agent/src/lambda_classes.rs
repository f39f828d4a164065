//! Lambda classes kept across the redefinitions of a run-time start and stop: at the first start or stop
//! of a probe, the JDK's lambda factory is patched (rewriter `probes::lambda_classes`) to take its classes
//! from `java.lang.HeapProxyLambdas`, which gives a lambda site linked again the class it had. Without
//! it each start and stop left every lambda of every redefined class with one more class, and the code
//! the redefinitions left alone with profiles C2 no longer inlines through (bench/README.md,
//! 2026-11-28).
//!
//! When is it made: loaded at start-up with every probe off (`start=off`, the JVM that profiles on
//! demand), at VM_INIT, before the program's first line, so that every lambda the program links keeps its
//! class at the first start too. Otherwise (an attach, or probes on from the start) at the first start or
//! stop: lambdas linked before it keep the class they have and get one more at their first relinking, so
//! profiles there hold two classes, which C2 still inlines (a bimorphic call, measured at 1-3% on a loop
//! whose one hot call is the lambda), where before they grew by one a switch. It stays for the life of the
//! VM (it costs nothing where code runs, only where a lambda is linked). `keep-lambdas=off` leaves the
//! factory alone.

use std::sync::atomic::{AtomicBool, Ordering};

use crate::jni::Jni;
use crate::jvmti::ERROR_NONE;
use crate::state::{agent, Agent};
use instr_rewriter::probes::lambda_classes::{keep_lambda_classes, LAMBDA_CLASSES, LAMBDA_FACTORY};

/// `keep-lambdas=` (on by default).
static ENABLED: AtomicBool = AtomicBool::new(true);

/// Set at load when the patch is to be made at VM_INIT (`start=off` at start-up, with switching possible).
static AT_VM_INIT: AtomicBool = AtomicBool::new(false);

pub fn configure(on: bool, at_vm_init: bool) {
    ENABLED.store(on, Ordering::Release);
    AT_VM_INIT.store(on && at_vm_init, Ordering::Release);
}

/// VM_INIT, once HeapProxyLambdas is defined: the patch, if the agent loaded with every probe off.
pub fn at_vm_init(jni: Jni) {
    if AT_VM_INIT.swap(false, Ordering::AcqRel) {
        if let Some(a) = agent() {
            crate::switches::keep_lambdas(a, jni);
        }
    }
}

/// Set once HeapProxyLambdas said it can stand in for the factory: from then on the class hook patches
/// the factory whenever it sees it.
static KEEPING: AtomicBool = AtomicBool::new(false);
/// Set when the class hook has handed the VM the patched factory.
static PATCHED: AtomicBool = AtomicBool::new(false);

/// With the class hook on (a start or stop, or [`at_vm_init`]): patches the factory if it is not yet. Returns what to say of it
/// when something went wrong, None otherwise.
pub fn keep(a: &Agent, jni: Jni) -> Option<String> {
    if !ENABLED.load(Ordering::Acquire) || PATCHED.load(Ordering::Acquire) {
        return None;
    }
    if !KEEPING.load(Ordering::Acquire) {
        let proxy = jni.find_class(LAMBDA_CLASSES)?;
        let ready = jni
            .static_method(proxy, "ready", "()I")
            .and_then(|m| jni.call_static_int(proxy, m, &[]));
        jni.delete_local(proxy);
        if ready != Some(1) {
            return Some("this JDK's lambda factory is not the one instr knows: lambdas get new classes at each start and stop".into());
        }
        KEEPING.store(true, Ordering::Release);
    }
    // Loading the factory, if nothing has yet, goes through the hook, which patches it.
    let factory = jni.find_class(LAMBDA_FACTORY)?;
    let mut problem = None;
    if !PATCHED.load(Ordering::Acquire) {
        let e = a.jvmti.retransform_classes(&[factory]);
        if e != ERROR_NONE || !PATCHED.load(Ordering::Acquire) {
            problem = Some(format!("the lambda factory was not patched (JVMTI error {e}): lambdas get new classes at each start and stop"));
        }
    }
    jni.delete_local(factory);
    problem
}

/// ClassFileLoadHook: the patched factory once [`keep`] has begun, None for every other class.
pub fn patch(name: &[u8], bytes: &[u8]) -> Option<Vec<u8>> {
    if name != LAMBDA_FACTORY.as_bytes() || !KEEPING.load(Ordering::Acquire) {
        return None;
    }
    let patched = keep_lambda_classes(bytes).ok().flatten()?;
    PATCHED.store(true, Ordering::Release);
    Some(patched)
}
