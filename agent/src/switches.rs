//! Probes switched on and off while the program runs (`instr ctl PID start|stop PROBE`, `instr.Control`).
//!
//! A probe that is off is not in the code at all: switching is RetransformClasses over the loaded classes
//! the probe touches. Switching on, the class hook (hook.rs) rewrites each class as at load time; switching
//! off, it passes the class's original bytes through unchanged (the VM hands every retransform the bytes
//! it cached the first time a hook changed the class), so the class is its original again, byte for byte,
//! and the program pays nothing. With every probe off the class hook itself is disabled: class loading
//! costs what it costs without the agent.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use instr_rewriter::bytecode::instructions::allocates;
use instr_rewriter::constant_pool::ConstantPool;
use instr_rewriter::probes::exclusions::class_never_instrumented;
use instr_rewriter::probes::vm_made::{made_by_call, Made};
use instr_rewriter::probes::Selection;
use instr_rules::Rules;

use crate::allocating_intrinsics::{compiles_to_one, may_call_one, TurnedOff};
use crate::ffi::retransform::ERROR_NATIVE_METHOD;
use crate::ffi::Jni;
use crate::jvmti::{event, ERROR_NONE};
use crate::obsolete_code::{self, Released};
use crate::state::{lock, Agent};
use jni_sys::jclass;

/// The run-time options: `start=on|off` and `control=on|off`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunTime {
    /// The rules' probes count from the moment the agent loads (`start=on`, the default).
    pub start: bool,
    /// The control socket `instr ctl` talks to (control.rs).
    pub control: bool,
    /// `early=on`: classes rewritten as they load from the VM's very first one, by the early class hook,
    /// which turns class-data sharing off; `off`: the probes go on at VM_INIT (cds.rs); None (`auto`,
    /// the default): whichever costs less for the rules and the JDK (`cds::early_pays`).
    pub early: Option<bool>,
    /// `keep-lambdas=on` (the default): a run-time start patches the JDK's lambda factory so that a lambda
    /// keeps its class through the redefinitions of starts and stops (lambda_classes.rs).
    pub keep_lambdas: bool,
}

impl Default for RunTime {
    fn default() -> Self {
        RunTime {
            start: true,
            control: true,
            early: None,
            keep_lambdas: true,
        }
    }
}

impl RunTime {
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        if key == "early" && value == "auto" {
            self.early = None;
            return Ok(());
        }
        let on = match value {
            "on" => true,
            "off" => false,
            _ => return Err(format!("{key}={value}: expected on or off")),
        };
        match key {
            "start" => self.start = on,
            "early" => self.early = Some(on),
            "keep-lambdas" => self.keep_lambdas = on,
            _ => self.control = on,
        }
        Ok(())
    }
}

/// What `start` and `stop` name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Probe {
    /// The rules' `objects` and `arrays` probes (and their sites).
    Alloc,
    /// The rules' `methods` probe.
    Methods,
}

impl Probe {
    pub fn name(self) -> &'static str {
        match self {
            Probe::Alloc => "alloc",
            Probe::Methods => "methods",
        }
    }

    fn flag(self) -> &'static AtomicBool {
        match self {
            Probe::Alloc => &ALLOC,
            Probe::Methods => &METHODS,
        }
    }

    /// Whether the rules the agent loaded with have this probe at all.
    pub fn in_rules(self, rules: &Rules) -> bool {
        match self {
            Probe::Alloc => rules.objects() || rules.arrays(),
            Probe::Methods => rules.methods(),
        }
    }
}

/// Names of the classes the hook has changed since every probe was last off: what `stop` retransforms.
/// A class no probe changed keeps its code: a method running in a redefined class goes on in the old
/// version, interpreted, until it returns, so a class is redefined only when it must be.
static CHANGED: Mutex<Option<HashSet<Vec<u8>>>> = Mutex::new(None);

/// The hook changed the class `name` (empty: a class defined without a name, not retransformable).
pub fn changed(name: &[u8]) {
    if !name.is_empty() {
        lock(&CHANGED)
            .get_or_insert_with(HashSet::new)
            .insert(name.to_vec());
    }
}

static ALLOC: AtomicBool = AtomicBool::new(false);
static METHODS: AtomicBool = AtomicBool::new(false);
/// One switch at a time: the socket's thread and the Java API may ask together.
static SWITCHING: Mutex<()> = Mutex::new(());

/// At load: every probe of the rules on (`start=on`), or all off.
pub fn init(start: bool) {
    ALLOC.store(start, Ordering::Release);
    METHODS.store(start, Ordering::Release);
}

pub fn is_on(probe: Probe) -> bool {
    probe.flag().load(Ordering::Acquire)
}

/// Rules a `start PROBE RULES.yaml` chose for the probe, instead of those the agent loaded with.
/// Kept for the life of the VM (one small allocation per such `start`): a class rewritten under them may
/// be rewritten again, on a retransformation, at any time.
static CHOSEN: Mutex<[Option<&'static Rules>; 2]> = Mutex::new([None, None]);

/// The rules as the probes that are on select them; None when every probe is off.
pub fn selection(rules: &Rules) -> Option<Switched<'_>> {
    let (alloc, methods) = (is_on(Probe::Alloc), is_on(Probe::Methods));
    if !alloc && !methods {
        return None;
    }
    let chosen = *lock(&CHOSEN);
    Some(Switched {
        alloc_rules: chosen[0].unwrap_or(rules),
        methods_rules: chosen[1].unwrap_or(rules),
        alloc,
        methods,
    })
}

/// The rules of each probe with the probes that are off masked out.
#[derive(Clone, Copy)]
pub struct Switched<'a> {
    alloc_rules: &'a Rules,
    methods_rules: &'a Rules,
    alloc: bool,
    methods: bool,
}

impl Selection for Switched<'_> {
    fn objects(&self) -> bool {
        self.alloc && Selection::objects(self.alloc_rules)
    }
    fn class_wanted(&self, class: &[u8]) -> bool {
        // Each rules' fast check covers both probes: it may answer yes for a class only the other probe
        // wants, and the rewriter then finds nothing to do there.
        (self.alloc && Selection::class_wanted(self.alloc_rules, class))
            || (self.methods && Selection::class_wanted(self.methods_rules, class))
    }
    fn arrays(&self, class: &[u8], method: &[u8], descriptor: &[u8]) -> bool {
        self.alloc && Selection::arrays(self.alloc_rules, class, method, descriptor)
    }
    fn object_sites(&self, class: &[u8], method: &[u8], descriptor: &[u8]) -> bool {
        self.alloc && Selection::object_sites(self.alloc_rules, class, method, descriptor)
    }
    fn live_objects(&self) -> bool {
        self.alloc && Selection::live_objects(self.alloc_rules)
    }
    fn methods(&self, class: &[u8], method: &[u8], descriptor: &[u8], access: u16) -> bool {
        self.methods && Selection::methods(self.methods_rules, class, method, descriptor, access)
    }
}

/// What one switch did, for `status`, `start` and `stop` to print.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Summary {
    /// Classes retransformed.
    pub retransformed: usize,
    /// Selected classes the VM cannot retransform: hidden classes (lambdas' and method handles' own)...
    pub hidden: usize,
    /// ...and other classes it will not modify.
    pub unmodifiable: usize,
    /// Classes whose retransformation failed (each also reported once on stderr).
    pub failed: usize,
    /// Selected classes a start of the allocation probes left alone: no method of theirs has a site of a
    /// kind the probes change (has_sites), and a retransformation would only take their compiled code and
    /// profiles away.
    pub without_allocations: usize,
    /// Classes retransformed, rewritten or not, only to throw away the code C2 may have compiled with an
    /// allocating intrinsic the start turned off (allocating_intrinsics.rs).
    pub intrinsic_callers: usize,
    pub millis: u128,
    /// After a stop on a VM without a code sweeper: the collections that unloaded the compiled code the stop
    /// made obsolete (obsolete_code.rs).
    pub code_released: Option<Released>,
}

impl std::fmt::Display for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} classes retransformed", self.retransformed)?;
        if self.intrinsic_callers > 0 {
            write!(
                f,
                " ({} only for their calls of allocating intrinsics)",
                self.intrinsic_callers
            )?;
        }
        write!(
            f,
            " in {} ms; not retransformable: {} hidden, {} unmodifiable; {} failed",
            self.millis, self.hidden, self.unmodifiable, self.failed
        )?;
        if self.without_allocations > 0 {
            write!(
                f,
                "; {} without an allocation left as they were",
                self.without_allocations
            )?;
        }
        if let Some(r) = self.code_released {
            write!(
                f,
                "; the code compiled with the probes unloaded by {} in {} ms",
                r.by, r.millis
            )?;
        }
        Ok(())
    }
}

/// Classes per RetransformClasses call: each call is one safepoint, so a batch bounds how long the
/// program stops at once, and a class that fails is looked for in one batch, not in all.
const BATCH: usize = 256;

/// Turns `probe` on or off and retransforms the loaded classes it touches. Runs on an agent thread, the
/// attach listener or the thread that called `instr.Control`, never inside a probe.
///
/// `chosen`, with `on`: rules of its own for the probe (`start PROBE RULES.yaml`), which select other
/// classes, methods or sites; what the counters hold (depth, live tracking) stays as loaded.
pub fn switch(
    a: &Agent,
    jni: Jni,
    probe: Probe,
    on: bool,
    chosen: Option<Rules>,
) -> Result<Summary, String> {
    let _one_at_a_time = lock(&SWITCHING);
    if !probe.in_rules(&a.rules) {
        return Err(format!(
            "{}: the rules the agent loaded with select no such probe (attach with rules=FILE that does)",
            probe.name()
        ));
    }
    if !a.engaged.load(Ordering::Acquire) {
        return Err(
            "HeapProxy is not engaged (see the program's stderr); nothing can count".into(),
        );
    }
    if let Some(r) = &chosen {
        compatible(a, probe, r)?;
        if is_on(probe) {
            return Err(format!(
                "{} is on: stop it first, then start it with other rules",
                probe.name()
            ));
        }
    }
    if is_on(probe) == on {
        return Ok(Summary::default());
    }
    let slot = usize::from(probe == Probe::Methods);
    if on {
        lock(&CHOSEN)[slot] = chosen.map(|r| &*Box::leak(Box::new(r)));
    }
    let rules = lock(&CHOSEN)[slot].unwrap_or(&a.rules);
    let touched = Switched {
        alloc_rules: rules,
        methods_rules: rules,
        alloc: probe == Probe::Alloc,
        methods: probe == Probe::Methods,
    };
    if on {
        set_class_hook(a, true)?;
    }
    // Before the first redefinition, a stop's as much as a start's (the hook is on either way here).
    if let Some(problem) = crate::lambda_classes::keep(a, jni) {
        eprintln!("instr: {problem}");
    }
    if probe == Probe::Alloc && on {
        if let Some(problem) =
            crate::allocating_intrinsics::keep_allocations_in_bytecode_from_now(jni, rules)
        {
            eprintln!("instr: {problem}");
        }
    }
    probe.flag().store(on, Ordering::Release);
    if probe == Probe::Alloc {
        // The VM's own allocations (clone, reflection): the event costs nothing while it is off.
        let mode = if on { crate::jvmti::ENABLE } else { 0 };
        if a.jvmti
            .set_event_notification_mode(event::VM_OBJECT_ALLOC, mode)
            != ERROR_NONE
        {
            eprintln!("instr: cannot switch the JVMTI VMObjectAlloc event");
        }
    }
    // Switching on, every class the probe may select; off, only those the hook changed.
    let only_changed = (!on).then(|| lock(&CHANGED).clone().unwrap_or_default());
    let mut summary = retransform(a, jni, &touched, only_changed.as_ref());
    if !on && summary.retransformed > 0 {
        summary.code_released = obsolete_code::release(a, jni);
    }
    if probe == Probe::Alloc && !on {
        if let Some(problem) = crate::allocating_intrinsics::let_compilers_choose_again(jni) {
            eprintln!("instr: {problem}");
        }
    }
    if selection(&a.rules).is_none() {
        set_class_hook(a, false)?;
        *lock(&CHANGED) = None;
    }
    Ok(summary)
}

/// At VM_INIT with class-data sharing kept on (cds.rs), HeapProxy defined but not yet engaged: every probe
/// of the rules on, and the loaded classes they select retransformed, with the Early flavour. Before the
/// engagement, so that what the retransformation itself runs in Java (`Modules.transformedByAgent` giving
/// java.base its read edges) is not counted, as it is not when the early class hook rewrites the classes.
pub fn start_unengaged(a: &Agent, jni: Jni) -> Result<Summary, String> {
    let _one_at_a_time = lock(&SWITCHING);
    for probe in [Probe::Alloc, Probe::Methods] {
        probe
            .flag()
            .store(probe.in_rules(&a.rules), Ordering::Release);
    }
    let Some(selected) = selection(&a.rules) else {
        return Ok(Summary::default());
    };
    set_class_hook(a, true)?;
    if is_on(Probe::Alloc)
        && a.jvmti
            .set_event_notification_mode(event::VM_OBJECT_ALLOC, crate::jvmti::ENABLE)
            != ERROR_NONE
    {
        eprintln!("instr: cannot enable the JVMTI VMObjectAlloc event");
    }
    Ok(retransform(a, jni, &selected, None))
}

/// Rules given at `start` must have the probe, and agree with what HeapProxy's tables were made for.
fn compatible(a: &Agent, probe: Probe, r: &Rules) -> Result<(), String> {
    if !probe.in_rules(r) {
        return Err(format!("the rules select no {} probe", probe.name()));
    }
    if probe == Probe::Alloc
        && (r.depth() != a.rules.depth()
            || r.live() != a.rules.live()
            || r.live_bytes() != a.rules.live_bytes())
    {
        return Err(format!(
            "depth and live are fixed when the agent loads (depth {}, live {}): the rules differ",
            a.rules.depth(),
            a.rules.live().max(a.rules.live_bytes())
        ));
    }
    Ok(())
}

/// The lambda factory patched with no probe switched (lambda_classes.rs, at VM_INIT): the class hook on
/// for its one retransformation, and off again unless a probe went on meanwhile.
pub fn keep_lambdas(a: &Agent, jni: Jni) {
    let _one_at_a_time = lock(&SWITCHING);
    if let Err(e) = set_class_hook(a, true) {
        eprintln!("instr: {e}");
        return;
    }
    if let Some(problem) = crate::lambda_classes::keep(a, jni) {
        eprintln!("instr: {problem}");
    }
    if selection(&a.rules).is_none() {
        if let Err(e) = set_class_hook(a, false) {
            eprintln!("instr: {e}");
        }
    }
}

fn set_class_hook(a: &Agent, on: bool) -> Result<(), String> {
    let mode = if on { crate::jvmti::ENABLE } else { 0 };
    if a.jvmti
        .set_event_notification_mode(event::CLASS_FILE_LOAD_HOOK, mode)
        != ERROR_NONE
    {
        return Err("cannot switch the JVMTI ClassFileLoadHook event".into());
    }
    Ok(())
}

/// Retransforms every loaded class `touched` selects (and, given `only`, that `only` names), in batches;
/// at a start of the allocation probes, also the classes whose compiled code may hold an intrinsic the
/// start turned off (allocating_intrinsics.rs), counted in `intrinsic_callers` as they are chosen.
pub fn retransform(
    a: &Agent,
    jni: Jni,
    touched: &Switched,
    only: Option<&HashSet<Vec<u8>>>,
) -> Summary {
    let started = Instant::now();
    let mut summary = Summary::default();
    let classes = a.jvmti.loaded_classes();
    // A start of the allocation probes alone: only the classes they would change. The stop has `only`.
    let allocating_only = only.is_none() && !touched.methods;
    // ...and the classes whose code C2 may have compiled with an allocating intrinsic that the start turned
    // off (allocating_intrinsics.rs), rewritten or not, wanted by the rules or not.
    let intrinsics = if allocating_only && touched.alloc {
        crate::allocating_intrinsics::turned_off_at_start()
    } else {
        TurnedOff::default()
    };
    let selected_here = |name: &str| touched.alloc_rules.allocations_may_select(name.as_bytes());
    let mut selected: Vec<jclass> = Vec::new();
    for &class in &classes {
        let name = a
            .jvmti
            .class_signature(class)
            .and_then(|s| internal_name(&s).map(str::to_owned));
        let Some(name) = name else { continue };
        let wanted = crate::hook::wanted(touched, name.as_bytes())
            && only.is_none_or(|o| o.contains(name.as_bytes()));
        if wanted && !a.jvmti.is_modifiable_class(class) {
            if name.contains('.') {
                // A hidden class's name ends in `.0x...`: no class file names it, nothing can
                // retransform it.
                summary.hidden += 1;
            } else {
                summary.unmodifiable += 1;
            }
        } else if wanted
            && (!allocating_only
                || name == "java/lang/Object"
                || has_sites(a, class, touched.alloc_rules))
        {
            selected.push(class);
        } else if intrinsics.any()
            && may_call_one(intrinsics, selected_here(&name))
            && !class_never_instrumented(name.as_bytes())
            && a.jvmti.is_modifiable_class(class)
            && calls_intrinsics(
                a,
                class,
                intrinsics,
                touched.alloc_rules,
                selected_here(&name),
            )
        {
            selected.push(class);
            summary.intrinsic_callers += 1;
        } else if wanted {
            summary.without_allocations += 1;
        }
    }
    for batch in selected.chunks(BATCH) {
        if a.jvmti.retransform_classes(batch) == ERROR_NONE {
            summary.retransformed += batch.len();
            continue;
        }
        // One class refused takes its batch down: find it, and keep the others.
        for &class in batch {
            let e = a.jvmti.retransform_classes(&[class]);
            if e == ERROR_NONE {
                summary.retransformed += 1;
            } else {
                summary.failed += 1;
                let name = a.jvmti.class_signature(class).unwrap_or_default();
                eprintln!("instr: {name}: RetransformClasses failed (JVMTI error {e}); it keeps its current code");
            }
        }
    }
    for class in classes {
        jni.delete_local(class);
    }
    summary.millis = started.elapsed().as_millis();
    summary
}

/// Whether a method of `class` has an allocation site of a kind `rules` probes (`new` for object sites,
/// the array instructions for arrays, and the calls that return what the VM made: `probes::vm_made`),
/// read with GetBytecodes and GetConstantPool. True when JVMTI cannot say (a class not yet prepared, no
/// can_get_bytecodes): such a class is retransformed, and the class hook decides.
fn has_sites(a: &Agent, class: jclass, rules: &Rules) -> bool {
    let Some(methods) = a.jvmti.class_methods(class) else {
        return true;
    };
    let (objects, arrays) = (rules.object_sites(), rules.arrays());
    let (clones, vm_made) = (rules.objects(), rules.objects() || arrays);
    let pool_bytes = if vm_made {
        a.jvmti.constant_pool(class).ok()
    } else {
        None
    };
    let pool = pool_bytes
        .as_deref()
        .and_then(|bytes| ConstantPool::read_alone(bytes).ok());
    methods.into_iter().any(|m| match a.jvmti.bytecodes(m) {
        Ok(code) => allocates(&code, objects, arrays, |pc| {
            vm_made
                && pool.as_ref().is_none_or(|pool| {
                    // Without the pool, any call might be one.
                    match made_by_call(pool, &code, pc) {
                        Some(Made::Array) => arrays,
                        Some(Made::Object) => clones,
                        None => false,
                    }
                })
        }),
        Err(e) => e != ERROR_NATIVE_METHOD,
    })
}

/// Whether a method of `class` calls what the start turned off in C2 (`compiles_to_one`). False when JVMTI
/// cannot say: such a class keeps its compiled code, as it did before this check.
fn calls_intrinsics(
    a: &Agent,
    class: jclass,
    off: TurnedOff,
    rules: &Rules,
    selected: bool,
) -> bool {
    let Some(methods) = a.jvmti.class_methods(class) else {
        return false;
    };
    let Some(bytes) = a.jvmti.constant_pool(class).ok() else {
        return false;
    };
    let Ok(pool) = ConstantPool::read_alone(&bytes) else {
        return false;
    };
    methods.into_iter().any(|m| {
        a.jvmti.bytecodes(m).is_ok_and(|code| {
            allocates(&code, false, false, |pc| {
                compiles_to_one(off, rules, selected, &pool, &code, pc)
            })
        })
    })
}

/// `java/lang/String` for `Ljava/lang/String;`; None for arrays and primitive types.
fn internal_name(signature: &str) -> Option<&str> {
    signature.strip_prefix('L')?.strip_suffix(';')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_options() {
        assert_eq!(
            internal_name("Ljava/lang/Object;"),
            Some("java/lang/Object")
        );
        assert_eq!(internal_name("[I"), None);
        assert_eq!(internal_name("I"), None);
        let mut r = RunTime::default();
        assert!(r.start && r.control && r.keep_lambdas);
        assert_eq!(r.early, None, "auto unless chosen");
        r.set("start", "off").unwrap();
        r.set("control", "off").unwrap();
        r.set("early", "on").unwrap();
        r.set("keep-lambdas", "off").unwrap();
        assert_eq!(
            r,
            RunTime {
                start: false,
                control: false,
                early: Some(true),
                keep_lambdas: false,
            }
        );
        assert!(r.set("start", "later").unwrap_err().contains("start=later"));
        assert!(r.set("start", "auto").is_err(), "auto is early's alone");
        r.set("early", "auto").unwrap();
        assert_eq!(r.early, None);
    }

    #[test]
    fn a_probe_that_is_off_selects_nothing() {
        let rules = Rules::parse(
            "probes: [objects, arrays, methods]\nmethods:\n  include: [\"**\"]\n",
            "test",
        )
        .unwrap();
        let only_methods = Switched {
            alloc_rules: &rules,
            methods_rules: &rules,
            alloc: false,
            methods: true,
        };
        assert!(!only_methods.objects());
        assert!(!only_methods.arrays(b"a/B", b"m", b"()V"));
        assert!(only_methods.methods(b"a/B", b"m", b"()V", 1));
        let none = Switched {
            alloc_rules: &rules,
            methods_rules: &rules,
            alloc: false,
            methods: false,
        };
        assert!(!none.class_wanted(b"a/B"));
    }
}
