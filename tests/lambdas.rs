//! A lambda keeps its class through the redefinitions of run-time starts and stops (agent
//! lambda_classes.rs): with `keep-lambdas=on`, the default, and the agent loaded with `start=off`, each
//! lambda of a class started and stopped three times has the one class it was linked with before the
//! first switch; with `keep-lambdas=off` it has one more per switch, the cost the patch removes. Run on every JDK found, with the class's lambdas checked to compute right.

mod support;

use std::fs;

use support::*;

fn run(jdk: &Jdk, keep: &str) -> String {
    let classes = compiled_test_classes(jdk, "lambdas");
    let dir = scratch(&format!("lambdas-{}-{keep}", jdk.key()));
    let rules = dir.join("rules.yaml");
    fs::write(
        &rules,
        "probes: [objects, arrays]\nallocations:\n  include: [\"LambdaSwitch\"]\n",
    )
    .unwrap();
    let out = java(
        jdk,
        &[
            format!(
                "-agentpath:{}=rules={},file={},start=off,keep-lambdas={keep}",
                agent_lib().display(),
                rules.display(),
                dir.join("r").display()
            ),
            "-cp".to_string(),
            classes.display().to_string(),
            "LambdaSwitch".to_string(),
        ],
    );
    check(
        &format!("{}: LambdaSwitch, keep-lambdas={keep}", jdk.version),
        &out,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("lambda factory"),
        "{}: {stderr}",
        jdk.version
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[test]
fn a_lambda_keeps_its_class_through_starts_and_stops() {
    for jdk in all_jdks() {
        assert_eq!(
            run(&jdk, "on"),
            "classes: sum 1, adder 1",
            "{}",
            jdk.version
        );
        assert_eq!(
            run(&jdk, "off"),
            "classes: sum 7, adder 7",
            "{}",
            jdk.version
        );
    }
}
