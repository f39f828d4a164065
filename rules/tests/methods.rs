//! Which kinds of method get entry/exit probes: bridges, synthetic methods and lambda bodies.

use instr_rewriter::probes::Selection;
use instr_rules::{Rules, ACC_BRIDGE, ACC_SYNTHETIC};

const PUBLIC: u16 = 0x0001;
const PRIVATE_STATIC: u16 = 0x000a;

fn rules(bridges: bool, synthetic: bool) -> Rules {
    let text = format!(
        "probes: [methods]\nmethods:\n  include: [\"app.**\"]\n  bridges: {bridges}\n  synthetic: {synthetic}\n"
    );
    Rules::parse(&text, "m.yaml").unwrap()
}

fn selected(rules: &Rules, method: &str, access: u16) -> bool {
    let by_rules = rules.method_selected(b"app/Main", method.as_bytes(), b"()V", access);
    assert_eq!(
        by_rules,
        Selection::methods(rules, b"app/Main", method.as_bytes(), b"()V", access)
    );
    by_rules
}

const BRIDGE: u16 = PUBLIC | ACC_BRIDGE | ACC_SYNTHETIC;
const SYNTHETIC: u16 = PRIVATE_STATIC | ACC_SYNTHETIC;

#[test]
fn defaults_exclude_bridges_and_synthetic_but_keep_lambdas() {
    let rules = Rules::parse(
        "probes: [methods]\nmethods:\n  include: [\"app.**\"]\n",
        "m.yaml",
    )
    .unwrap();
    assert!(selected(&rules, "run", PUBLIC));
    assert!(!selected(&rules, "compareTo", BRIDGE));
    assert!(!selected(&rules, "access$000", SYNTHETIC));
    assert!(selected(&rules, "lambda$main$0", SYNTHETIC));
    assert!(selected(&rules, "lambda$static$1", SYNTHETIC | 0x0001));
}

#[test]
fn bridges_flag_governs_bridges_only() {
    let rules = rules(true, false);
    assert!(selected(&rules, "compareTo", BRIDGE));
    assert!(selected(&rules, "compareTo", PUBLIC | ACC_BRIDGE));
    assert!(!selected(&rules, "access$000", SYNTHETIC));
    assert!(selected(&rules, "lambda$main$0", SYNTHETIC));
}

#[test]
fn synthetic_flag_governs_non_bridge_synthetic_methods() {
    let rules = rules(false, true);
    assert!(!selected(&rules, "compareTo", BRIDGE));
    assert!(selected(&rules, "access$000", SYNTHETIC));
    assert!(selected(&rules, "lambda$main$0", SYNTHETIC));
    let rules = rules_all();
    assert!(selected(&rules, "compareTo", BRIDGE));
    assert!(selected(&rules, "access$000", SYNTHETIC));
}

fn rules_all() -> Rules {
    rules(true, true)
}

#[test]
fn lambdas_still_obey_patterns() {
    let text = "probes: [methods]\nmethods:\n  include: [\"app.**\"]\n  exclude: [\"app.Main#lambda$*\"]\n";
    let rules = Rules::parse(text, "m.yaml").unwrap();
    assert!(!selected(&rules, "lambda$main$0", SYNTHETIC));
    assert!(selected(&rules, "main", PUBLIC));
    assert!(!rules.method_selected(b"other/Main", b"lambda$main$0", b"()V", SYNTHETIC));
}

#[test]
fn methods_probe_off_selects_no_method() {
    let text = "probes: [objects]\nmethods:\n  include: [\"**\"]\n";
    let rules = Rules::parse(text, "m.yaml").unwrap();
    assert!(rules.method_selected(b"app/Main", b"main", b"()V", PUBLIC));
    assert!(!Selection::methods(
        &rules,
        b"app/Main",
        b"main",
        b"()V",
        PUBLIC
    ));
}
