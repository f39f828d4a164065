//! `instr diff` on two real profiles of one program, the second with one more allocation loop: the diff
//! shows that loop's site and stack as grown, and nothing else of the program; `--fail-over` turns the
//! growth into a failing exit status for CI.

mod support;

use std::process::Command;

use support::*;

/// Rows of one section of the diff text (`SITES`, `CLASSES`, `METHODS`): the lines between BEGIN and END,
/// less the header.
fn section<'a>(diff: &'a str, name: &str) -> Vec<&'a str> {
    diff.lines()
        .skip_while(|l| !l.starts_with(&format!("{name} BEGIN")))
        .skip(2)
        .take_while(|l| !l.starts_with(&format!("{name} END")))
        .collect()
}

#[test]
fn diff_of_two_runs_shows_exactly_the_added_loop() {
    let instr = env!("CARGO_BIN_EXE_instr");
    for jdk in jdks() {
        let v = &jdk.version;
        let dir = scratch(&format!("diff-{}", jdk.key()));
        javac(
            &jdk,
            &[workspace().join("test-classes/diff/Grows.java")],
            &dir.join("classes"),
            &[],
        );
        let profile = |name: &str, args: &[&str]| {
            let prefix = dir.join(name);
            let mut cmd = Command::new(jdk.bin("java"));
            cmd.arg(format!(
                "-agentpath:{}=rules={},file={},depth=2",
                agent_lib().display(),
                workspace().join("rules/default.yaml").display(),
                prefix.display()
            ))
            .arg("-Xint") // the same code paths in both runs, whatever the JIT decides
            .arg("-cp")
            .arg(dir.join("classes"))
            .arg("Grows")
            .args(args);
            check(&format!("[{v}] Grows {args:?}"), &run(&mut cmd));
            prefix.with_extension("json")
        };
        let before = profile("before", &[]);
        let after = profile("after", &["more"]);
        let out = run(Command::new(instr)
            .arg("diff")
            .arg(&before)
            .arg(&after)
            .args(["--fail-over", "0"]));
        let diff = text(&out.stdout);
        assert_eq!(
            out.status.code(),
            Some(1),
            "[{v}] growth fails the check: {diff}"
        );
        let sites = section(&diff, "SITES");
        let ours: Vec<&&str> = sites.iter().filter(|l| l.contains("Grows")).collect();
        assert_eq!(
            ours.len(),
            1,
            "[{v}] one site of the program changed: {diff}"
        );
        let row: Vec<&str> = ours[0].split_whitespace().collect();
        assert_eq!(&row[1..4], ["+1000", "0", "1000"], "[{v}] {diff}");
        assert!(
            row.last()
                .unwrap()
                .ends_with("Grows.main([Ljava/lang/String;)V;Grows.extraLoop()V;Grows$Extra"),
            "[{v}] the loop's stack: {}",
            ours[0]
        );
        let classes = section(&diff, "CLASSES");
        let ours: Vec<&&str> = classes.iter().filter(|l| l.contains("Grows")).collect();
        assert_eq!(ours.len(), 1, "[{v}] {diff}");
        assert!(ours[0].trim_end().ends_with("Grows$Extra"), "[{v}] {diff}");
        // Whatever else differs is the JDK's own start-up (the launcher reading an argument, say).
        for l in sites.iter().chain(&classes) {
            if !l.contains("Grows") {
                let name = l.split_whitespace().last().unwrap();
                let leaf_frames: Vec<&str> = name.split(';').collect();
                assert!(
                    leaf_frames.iter().all(|f| !f.starts_with("Grows")),
                    "[{v}] a change in the program beyond the loop: {l}"
                );
            }
        }
        // Without a threshold the diff is a report, not a check.
        let out = run(Command::new(instr).arg("diff").arg(&before).arg(&after));
        assert_eq!(out.status.code(), Some(0), "[{v}]");
        println!(
            "[{v}] diff: {} site rows, the loop's one +1000",
            sites.len()
        );
    }
}
