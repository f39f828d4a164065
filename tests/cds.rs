//! Class-data sharing at start-up (issue 17): with `early=off`, and with the default `early=auto` for rules
//! that leave the JDK's start-up classes alone (for every rule from JDK 25 on), the JVM keeps its CDS
//! archive under the agent, and the
//! counts of the program's own allocations are those of `early=on` (the early class hook, no archive).
//! Run on every JDK found.

mod support;

use std::fs;
use std::path::Path;

use support::*;

const PROGRAM: &str = r#"
public class CdsCounts {
    static Object keep;
    public static void main(String[] args) {
        for (int i = 0; i < 1000; i++) {
            keep = new int[7];
            keep = new CdsCounts();
        }
        java.util.ArrayList<Integer> l = new java.util.ArrayList<>();
        for (int i = 0; i < 100; i++) l.add(i);
        keep = l;
        System.out.println("done");
    }
}
"#;

/// `-Xshare:on` makes the JVM refuse to start when it cannot map the archive.
fn run(jdk: &Jdk, classes: &Path, prefix: &Path, extra: &str) -> std::process::Output {
    java(
        jdk,
        &[
            "-Xshare:on".to_string(),
            format!(
                "-agentpath:{}=file={}{extra}",
                agent_lib().display(),
                prefix.display()
            ),
            "-cp".to_string(),
            classes.display().to_string(),
            "CdsCounts".to_string(),
        ],
    )
}

/// The program's objects per class, and the `int[]` counted at `CdsCounts.main`'s site.
fn counts(prefix: &Path) -> (serde_json::Value, u64) {
    let v = profile_json(&fs::read_to_string(prefix.with_extension("json")).unwrap());
    let mut classes = serde_json::Map::new();
    for c in v["classes"].as_array().unwrap() {
        let name = c["class"].as_str().unwrap();
        // The JDK's own classes are left out: what the JVM initialises before VM_INIT (uncounted) differs
        // with the archive (an archived module graph runs no Java code to be built).
        if name == "CdsCounts" {
            classes.insert(name.to_string(), c["instances"].clone());
        }
    }
    let main_ints = v["sites"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["class"] == "int[]" && s["stack"][0]["class"] == "CdsCounts")
        .map(|s| s["count"].as_u64().unwrap())
        .sum();
    (serde_json::Value::Object(classes), main_ints)
}

#[test]
fn the_archive_stays_on_and_the_counts_are_those_of_the_early_hook() {
    for jdk in all_jdks() {
        let dir = scratch(&format!("cds-{}", jdk.key()));
        let src = dir.join("CdsCounts.java");
        fs::write(&src, PROGRAM).unwrap();
        let classes = dir.join("classes");
        javac(&jdk, &[src], &classes, &[]);

        let late = dir.join("late");
        let out = run(&jdk, &classes, &late, ",early=off");
        check(&format!("{}: early=off with -Xshare:on", jdk.version), &out);
        assert!(text(&out.stdout).contains("done"));

        // auto, with rules that select the program alone: the archive too.
        let rules = dir.join("app.yaml");
        fs::write(
            &rules,
            "probes: [objects, arrays]\nallocations:\n  include: [CdsCounts]\n",
        )
        .unwrap();
        let app = dir.join("app");
        let out = run(&jdk, &classes, &app, &format!(",rules={}", rules.display()));
        check(
            &format!("{}: early=auto, rules of the program", jdk.version),
            &out,
        );
        assert_eq!(counts(&app).1, 1000, "{}: early=auto", jdk.version);

        // auto, with the default rules: the archive from JDK 25 on; before it, the early class hook, and
        // `-Xshare:on` refuses to start.
        let default = dir.join("default");
        let out = run(&jdk, &classes, &default, "");
        if jdk.feature() >= 25 {
            check(&format!("{}: early=auto, default rules", jdk.version), &out);
            assert_eq!(counts(&default).1, 1000, "{}: default rules", jdk.version);
        } else {
            assert!(
                !out.status.success(),
                "{}: default rules kept the archive before JDK 25",
                jdk.version
            );
        }

        // The early class hook costs the archive: `-Xshare:on` then refuses to start.
        let refused = run(&jdk, &classes, &dir.join("refused"), ",early=on");
        assert!(
            !refused.status.success(),
            "{}: early=on with -Xshare:on started: {}",
            jdk.version,
            text(&refused.stderr)
        );

        let early = dir.join("early");
        let out = java(
            &jdk,
            &[
                format!(
                    "-agentpath:{}=file={},early=on",
                    agent_lib().display(),
                    early.display()
                ),
                "-cp".to_string(),
                classes.display().to_string(),
                "CdsCounts".to_string(),
            ],
        );
        check(&format!("{}: early=on", jdk.version), &out);

        let (late_classes, late_ints) = counts(&late);
        let (early_classes, early_ints) = counts(&early);
        assert_eq!(late_ints, 1000, "{}: int[] at CdsCounts.main", jdk.version);
        assert_eq!(early_ints, 1000, "{}: int[] at CdsCounts.main", jdk.version);
        assert_eq!(late_classes["CdsCounts"], 1000, "{}", jdk.version);
        assert_eq!(
            late_classes, early_classes,
            "{}: the program's classes, early=off against early=on",
            jdk.version
        );
    }
}
