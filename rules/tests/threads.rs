//! The `threads` section: defaults, every key, and strict errors with positions.

use instr_rules::{Rules, ThreadRules, DEFAULT_TRACE};

mod common;
use common::{parse, reject};

#[test]
fn absent_means_off() {
    assert_eq!(
        parse("probes: [objects]\n").threads(),
        &ThreadRules::default()
    );
    assert!(!Rules::empty().threads().enabled);
}

#[test]
fn every_key() {
    let r = parse(
        "threads:\n  monitors: true\n  deadlocks:\n    watch_ms: 250\n  trace:\n    file: \"t-%p.xml\"\n    allocations: true\n",
    );
    let t = r.threads();
    assert!(t.enabled && t.monitors && t.trace_allocations);
    assert_eq!(t.watch_ms, 250);
    assert_eq!(t.trace.as_deref(), Some("t-%p.xml"));
    assert_eq!(instr_rules::expand_template("t-%p.xml", 9), "t-9.xml");
}

#[test]
fn an_empty_section_turns_on_threads_only() {
    let r = parse("threads: {}\n");
    assert!(r.threads().enabled);
    assert!(!r.threads().monitors);
    assert_eq!(r.threads().watch_ms, 0);
    assert_eq!(r.threads().trace, None);
    let r = parse("threads:\n  trace: {}\n");
    assert_eq!(r.threads().trace.as_deref(), Some(DEFAULT_TRACE));
    assert!(!r.threads().trace_allocations);
}

#[test]
fn errors_point_at_the_value() {
    let e = reject("threads:\n  monitor: true\n");
    assert!(
        e.starts_with("rules.yaml:2:3: unknown key `monitor`"),
        "{e}"
    );
    assert!(e.contains("did you mean `monitors`?"), "{e}");
    let e = reject("threads:\n  deadlocks:\n    watch_ms: -1\n");
    assert!(
        e.starts_with("rules.yaml:3:15: watch_ms -1 is out of range"),
        "{e}"
    );
    let e = reject("threads:\n  trace:\n    file: \"t-%q.xml\"\n");
    assert!(e.starts_with("rules.yaml:3:11: "), "{e}");
    assert!(e.contains("`trace.file`") && e.contains("`%q`"), "{e}");
    let e = reject("threads:\n  monitors: yes\n");
    assert!(e.starts_with("rules.yaml:2:13: "), "{e}");
}

#[test]
fn shipped_threads_rules() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let r = Rules::from_file(&dir.join("threads.yaml")).unwrap();
    assert!(r.threads().monitors && !r.objects() && !r.arrays());
    assert_eq!(r.threads().watch_ms, 500);
    let r = Rules::from_file(&dir.join("threads-trace.yaml")).unwrap();
    assert!(r.threads().trace_allocations && r.objects());
    assert_eq!(r.depth(), 1);
}
