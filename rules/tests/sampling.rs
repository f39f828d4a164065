//! The `sampling` section: defaults, every key, and strict errors with positions.

use instr_rules::SamplingEngine;

mod common;
use common::{parse, reject};

#[test]
fn absent_means_off() {
    let s = *parse("probes: [objects]\n").sampling();
    assert!(!s.enabled());
    assert!(!s.debug_non_safepoints);
}

#[test]
fn every_key() {
    let s = *parse(
        "sampling:\n  cpu: 1ms\n  wall: 250us\n  engine: jvmti\n  debug_non_safepoints: true\n",
    )
    .sampling();
    assert_eq!(s.cpu_ns, 1_000_000);
    assert_eq!(s.wall_ns, 250_000);
    assert_eq!(s.engine, SamplingEngine::Jvmti);
    assert!(s.debug_non_safepoints);
}

#[test]
fn debug_non_safepoints_is_off_unless_asked_for() {
    let s = *parse("sampling:\n  cpu: 10ms\n").sampling();
    assert!(s.enabled() && !s.debug_non_safepoints);
    assert!(
        !parse("sampling:\n  cpu: 10ms\n  debug_non_safepoints: false\n")
            .sampling()
            .debug_non_safepoints
    );
}

#[test]
fn wrong_types_and_values_name_the_key_and_its_line() {
    let e = reject("sampling:\n  cpu: 10ms\n  debug_non_safepoints: often\n");
    assert!(
        e.starts_with("rules.yaml:3:") && e.contains("`debug_non_safepoints`"),
        "{e}"
    );
    let e = reject("sampling:\n  cpu: 5\n");
    assert!(
        e.starts_with("rules.yaml:2:") && e.contains("sampling.cpu"),
        "{e}"
    );
    let e = reject("sampling:\n  cpu: 10ms\n  engine: perf\n");
    assert!(
        e.starts_with("rules.yaml:3:") && e.contains("sampling.engine"),
        "{e}"
    );
}
