//! HotSpot's own verifier as the oracle for `rewrite-class`: whatever the rewriter writes must still link under
//! `-Xverify:all`, and programs must behave the same.
//!
//! * the harness (tests/harness/ForceLink.java) can fail: it rejects MakeBroken's classes and accepts the
//!   unmodified test-classes;
//! * `--edit nop` over every class of every installed JDK's runtime image: no class that linked before fails after;
//! * `--edit nop` over test-classes: every `main` prints the same, and every class still links.
//!
//! Blind spot: HotSpot 17 never verifies java.lang.{Object,Class,String,Throwable} nor the subclasses of
//! jdk.internal.reflect.MagicAccessorImpl (55 classes of its image), even with -Xverify:all; HotSpot 25 verifies
//! every class of its image.
//!
//! Run with `cargo test --test verify -- --nocapture` to see counts and timings. `INSTR_TEST_JDKS=17` (or "17,25")
//! limits the JDKs used.

mod support;

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use support::*;

// -------------------------------------------------------------------------------------------------------------
// (a) the harness itself

#[test]
fn harness_reports_broken_classes_and_fails() {
    for jdk in all_jdks() {
        let harness = compile_harness(&jdk);

        // loader mode
        let dir = scratch(&format!("broken-{}", jdk.key()));
        check(
            "MakeBroken",
            &java(
                &jdk,
                &[
                    "-cp".as_ref(),
                    harness.as_os_str(),
                    "MakeBroken".as_ref(),
                    dir.as_os_str(),
                ],
            ),
        );
        let r = force_link(&jdk, &[&dir]);
        println!(
            "[{}] broken fixtures: {}",
            jdk.version,
            r.summary.as_deref().unwrap_or("(no summary)")
        );
        r.assert_completed("ForceLink over MakeBroken's classes");
        assert_ne!(
            r.exit,
            Some(42),
            "the harness ran a static initialiser (Fine.<clinit> exits with 42)"
        );
        assert_eq!(
            r.exit,
            Some(1),
            "ForceLink must exit 1 on VERIFY/FORMAT\n{}",
            r.stdout
        );
        let expected = [
            ("BrokenFrame", "VERIFY"),
            ("BrokenBranch", "VERIFY"),
            ("BrokenMidInsn", "VERIFY"),
            ("NoFrame", "VERIFY"),
            ("BrokenReturn", "VERIFY"),
            ("BrokenOld", "VERIFY"),
            ("Truncated", "FORMAT"),
            ("NoSuper", "MISSING"),
            ("Fine", "OK"),
        ];
        for (class, status) in expected {
            assert_eq!(
                r.status(class),
                Some(status),
                "status of {class}\n{}",
                r.stdout
            );
        }
        assert_eq!(
            r.classes.len(),
            expected.len(),
            "unexpected classes in\n{}",
            r.stdout
        );

        // MISSING alone does not fail the run (it needs a comparison with the original to mean anything)
        let missing_only = scratch(&format!("broken-missing-only-{}", jdk.key()));
        fs::copy(
            dir.join("NoSuper.class"),
            missing_only.join("NoSuper.class"),
        )
        .unwrap();
        fs::copy(dir.join("Fine.class"), missing_only.join("Fine.class")).unwrap();
        let r = force_link(&jdk, &[&missing_only]);
        assert_eq!(
            r.exit,
            Some(0),
            "MISSING alone must not fail the harness\n{}",
            r.stdout
        );

        // boot mode: a broken class patched into java.base
        let boot = scratch(&format!("broken-boot-{}", jdk.key()));
        check(
            "MakeBroken --boot",
            &java(
                &jdk,
                &[
                    "-cp".as_ref(),
                    harness.as_os_str(),
                    "MakeBroken".as_ref(),
                    "--boot".as_ref(),
                    boot.as_os_str(),
                ],
            ),
        );
        let r = force_link_boot(&jdk, &boot);
        println!(
            "[{}] broken boot fixtures: {}",
            jdk.version,
            r.summary.as_deref().unwrap_or("(no summary)")
        );
        r.assert_completed("ForceLink --boot over MakeBroken's java.base classes");
        assert_eq!(
            r.status("java.util.ForceLinkBroken"),
            Some("VERIFY"),
            "{}",
            r.stdout
        );
        assert_eq!(
            r.status("java.util.ForceLinkFine"),
            Some("OK"),
            "{}",
            r.stdout
        );
        assert_eq!(r.exit, Some(1), "{}", r.stdout);

        // boot mode without the --patch-module options: the harness must notice, not report the VM's own classes
        let out = run(Command::new(jdk.bin("java"))
            .args(VERIFY_FLAGS)
            .arg("-cp")
            .arg(&harness)
            .arg("ForceLink")
            .arg("--boot")
            .arg(&boot));
        assert_eq!(
            out.status.code(),
            Some(3),
            "unpatched --boot run\n{}",
            text(&out.stdout)
        );
    }
}

#[test]
fn harness_accepts_unmodified_test_classes() {
    for jdk in all_jdks() {
        let edge = compile_edge_classes(&jdk);
        for note in &edge.skipped {
            println!("[{}] skipped: {note}", jdk.version);
        }
        for dir in [&edge.dir, &edge.limit_dir] {
            let r = force_link(&jdk, &[dir]);
            r.assert_completed("ForceLink over the compiled test-classes");
            let class_files = files_under(dir)
                .iter()
                .filter(|p| p.extension().is_some_and(|e| e == "class"))
                .count();
            println!(
                "[{}] unmodified {}: {}",
                jdk.version,
                dir.display(),
                r.summary.as_deref().unwrap_or("")
            );
            assert_eq!(r.exit, Some(0), "{}", r.stdout);
            assert_eq!(
                r.count("OK"),
                class_files,
                "every compiled class must link\n{}",
                r.stdout
            );
        }
        for main in &edge.mains {
            let (code, stdout, stderr) = run_main(&jdk, &edge.dir, main);
            assert_eq!(
                code,
                Some(0),
                "{main} failed on {}:\n{stdout}\n{stderr}",
                jdk.version
            );
            assert!(
                stdout.starts_with(main.as_str()),
                "{main} printed {stdout:?}"
            );
        }
    }
}

/// The generated sources still have the properties they exist for (re-checked with javap, on the oldest JDK).
#[test]
fn big_method_fixtures_sit_at_the_limits() {
    let jdk = all_jdks().into_iter().next().unwrap();
    let edge = compile_edge_classes(&jdk);
    let methods = javap_methods(&jdk, &edge.dir.join("BigBranches.class"));
    let near = |m: &str| -> Vec<i64> {
        let code = &methods[m];
        code.iter()
            .filter(|i| i.is_branch())
            .map(|i| i.branch_offset())
            .filter(|o| o.abs() >= 32_767 - 500)
            .collect()
    };
    for (name, code) in &methods {
        let len = code_length(code);
        assert!(len < 65_535, "{name}: {len} bytes");
        if name.contains("(int)") && !name.contains("main") {
            assert!(
                !near(name).is_empty(),
                "{name} has no branch within 500 bytes of 32767"
            );
        }
    }
    assert_eq!(near("static int forwardEdgeOver(int)"), vec![32_767]);
    assert_eq!(near("static int forwardEdgeFits(int)"), vec![32_766]);
    assert_eq!(near("static int backwardEdgeOver(int)"), vec![-32_768]);
    assert_eq!(near("static int backwardEdgeFits(int)"), vec![-32_767]);
    let loop_allocs = &methods["static int loopAllocs(int)"];
    assert!(
        near("static int loopAllocs(int)").len() == 2,
        "loopAllocs: forward if and back goto"
    );
    assert!(inserts(loop_allocs) >= 400);

    let methods = javap_methods(&jdk, &edge.limit_dir.join("CodeLimit.class"));
    let big = &methods["static int tooBigForNops(int)"];
    let (len, ins) = (code_length(big), inserts(big));
    assert!(
        len <= 65_535 && len + ins + 1 > 65_535,
        "tooBigForNops: {len} bytes, {ins} inserts"
    );
    let full = &methods["static int exactlyFullAfterNops(int)"];
    assert_eq!(
        code_length(full) + inserts(full) + 1,
        65_535,
        "exactlyFullAfterNops"
    );
    println!(
        "[{}] BigBranches/CodeLimit offsets and sizes as documented",
        jdk.version
    );
}

// -------------------------------------------------------------------------------------------------------------
// (b) the whole runtime image of every JDK

/// Runs the harness in --boot mode over the original and the rewritten image. Returns both reports and the
/// failures: classes OK before but not after, or a VM that could not get through the rewritten image.
fn boot_regressions(jdk: &Jdk, orig: &Path, new: &Path) -> (LinkReport, LinkReport, Vec<String>) {
    let before = force_link_boot(jdk, orig);
    before.assert_completed(&format!(
        "[{}] ForceLink --boot over the original {}",
        jdk.version,
        orig.display()
    ));
    let after = force_link_boot(jdk, new);
    let failures = if after.summary.is_none() {
        vec![format!(
            "[{}] the VM did not get through the rewritten {} (exit {:?}):\n{}\n{}",
            jdk.version,
            new.display(),
            after.exit,
            tail(&after.stdout, 20),
            tail(&after.stderr, 20)
        )]
    } else {
        before.regressions(&after)
    };
    (before, after, failures)
}

#[test]
fn nop_rewrite_keeps_every_jdk_class_linkable() {
    let mut failures = Vec::new();
    for jdk in all_jdks() {
        let t = Instant::now();
        let image = extract_jdk_image(&jdk);
        let t_extract = t.elapsed();

        let out_dir = target_dir().join("jdk-nop").join(jdk.key());
        if out_dir.exists() {
            fs::remove_dir_all(&out_dir).unwrap(); // before the clock starts: removing 200 MB takes a while
        }
        let t = Instant::now();
        let rw = rewrite_class(&["--edit", "nop"], &image, &out_dir);
        let t_rewrite = t.elapsed();
        let rw_stderr = text(&rw.stderr);
        if !out_dir.is_dir() {
            failures.push(format!(
                "[{}] rewrite-class wrote no {}: {}\n{}",
                jdk.version,
                out_dir.display(),
                rw.status,
                tail(&rw_stderr, 20)
            ));
            continue;
        }
        let (files_before, files_after) = (files_under(&image), files_under(&out_dir));
        if files_before != files_after {
            let missing: Vec<_> = files_before
                .iter()
                .filter(|p| !files_after.contains(p))
                .take(10)
                .collect();
            let extra: Vec<_> = files_after
                .iter()
                .filter(|p| !files_before.contains(p))
                .take(10)
                .collect();
            failures.push(format!(
                "[{}] output tree differs from input: missing {missing:?}, extra {extra:?}",
                jdk.version
            ));
        }
        let changed = files_before
            .iter()
            .filter(|p| p.extension().is_some_and(|e| e == "class"))
            .filter(|p| fs::read(image.join(p)).ok() != fs::read(out_dir.join(p)).ok())
            .count();

        let t = Instant::now();
        let (before, after, regressions) = boot_regressions(&jdk, &image, &out_dir);
        let t_verify = t.elapsed();
        println!(
            "[{}] image: {} classes checked, {} OK originally, {} OK after --edit nop ({} class files changed); \
             regressions: {}\n[{}] timings: extract {:.1}s, rewrite {:.1}s, verify original + rewritten {:.1}s",
            jdk.version,
            before.classes.len(),
            before.count("OK"),
            after.count("OK"),
            changed,
            regressions.len(),
            jdk.version,
            t_extract.as_secs_f64(),
            t_rewrite.as_secs_f64(),
            t_verify.as_secs_f64()
        );
        println!(
            "[{}] {}",
            jdk.version,
            rw_stderr.lines().last().unwrap_or("")
        );
        for line in before.not_ok_digest() {
            println!("[{}] not OK even unmodified: {line}", jdk.version);
        }
        if !regressions.is_empty() {
            let shown: Vec<&str> = regressions.iter().take(30).map(String::as_str).collect();
            failures.push(format!(
                "[{}] {} classes linked before --edit nop but not after:\n{}",
                jdk.version,
                regressions.len(),
                shown.join("\n")
            ));
        }
        if !rw.status.success() {
            let errors: Vec<&str> = rw_stderr
                .lines()
                .filter(|l| l.contains("error"))
                .take(30)
                .collect();
            failures.push(format!(
                "[{}] rewrite-class failed ({}):\n{}",
                jdk.version,
                rw.status,
                errors.join("\n")
            ));
        }
        if regressions.is_empty() && rw.status.success() {
            // ~200 MB per JDK: kept only when something failed, to look at with javap or rerun the harness on
            let _ = fs::remove_dir_all(&out_dir);
        } else {
            println!(
                "[{}] rewritten image kept in {}",
                jdk.version,
                out_dir.display()
            );
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

// -------------------------------------------------------------------------------------------------------------
// (c) test-classes: same output, still verifiable

/// Runs every main on the original and the rewritten classes and links both directories. Returns the failures
/// (a main whose exit status or stdout changed, a class OK before but not after) and the rewritten run's report.
fn edge_differences(
    jdk: &Jdk,
    orig: &Path,
    new: &Path,
    mains: &[String],
) -> (Vec<String>, LinkReport) {
    let mut failures = Vec::new();
    for main in mains {
        let before = run_main(jdk, orig, main);
        let after = run_main(jdk, new, main);
        assert_eq!(
            before.0,
            Some(0),
            "[{}] {main} fails even unmodified:\n{}\n{}",
            jdk.version,
            before.1,
            before.2
        );
        if before.0 != after.0 || before.1 != after.1 {
            failures.push(format!(
                "[{}] {main} differs after rewriting:\n  before (exit {:?}): {}\n  after  (exit {:?}): {}\n{}",
                jdk.version,
                before.0,
                before.1.trim_end(),
                after.0,
                after.1.trim_end(),
                tail(&after.2, 15)
            ));
        }
    }
    let linked_before = force_link(jdk, &[orig]);
    linked_before.assert_completed("ForceLink over the original test-classes");
    let linked_after = force_link(jdk, &[new]);
    linked_after.assert_completed("ForceLink over the rewritten test-classes");
    failures.extend(
        linked_before
            .regressions(&linked_after)
            .into_iter()
            .map(|r| format!("[{}] {r}", jdk.version)),
    );
    (failures, linked_after)
}

#[test]
fn nop_rewrite_of_test_classes_behaves_the_same() {
    let mut failures = Vec::new();
    for jdk in all_jdks() {
        let t = Instant::now();
        let edge = compile_edge_classes(&jdk);
        for note in &edge.skipped {
            println!("[{}] skipped: {note}", jdk.version);
        }
        let out_dir = scratch(&format!("edge-nop-{}", jdk.key()));
        let rw = rewrite_class(&["--edit", "nop"], &edge.dir, &out_dir);
        check(
            &format!(
                "[{}] rewrite-class --edit nop {}",
                jdk.version,
                edge.dir.display()
            ),
            &rw,
        );
        assert_eq!(
            files_under(&edge.dir),
            files_under(&out_dir),
            "output tree must mirror the input"
        );
        let changed = files_under(&edge.dir)
            .into_iter()
            .filter(|p| fs::read(edge.dir.join(p)).unwrap() != fs::read(out_dir.join(p)).unwrap())
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>();
        assert!(
            changed.iter().any(|c| c == "BigBranches.class"),
            "--edit nop left BigBranches.class unchanged"
        );

        let (mut diffs, after) = edge_differences(&jdk, &edge.dir, &out_dir, &edge.mains);
        println!(
            "[{}] test-classes: {} mains run, {} differ; {} classes ({} changed by --edit nop), {} OK after; {:.1}s",
            jdk.version,
            edge.mains.len(),
            diffs.iter().filter(|d| d.contains(" differs after ")).count(),
            after.classes.len(),
            changed.len(),
            after.count("OK"),
            t.elapsed().as_secs_f64()
        );
        failures.append(&mut diffs);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The comparisons above can fail: a class that no longer links and a program whose output changed are both
/// reported, in loader and in --boot mode.
#[test]
fn comparisons_catch_a_bad_rewrite() {
    for jdk in all_jdks() {
        let edge = compile_edge_classes(&jdk);
        let bad = scratch(&format!("edge-tampered-{}", jdk.key()));
        for rel in files_under(&edge.dir) {
            let mut bytes = fs::read(edge.dir.join(&rel)).unwrap();
            let name = rel.display().to_string();
            if name == "Switches.class" {
                bytes.truncate(bytes.len() / 2); // no longer a class file
            } else if name == "OldJsr.class" {
                let at = bytes
                    .windows(12)
                    .position(|w| w == b"subroutines=")
                    .expect("OldJsr's constant");
                bytes[at..at + 12].copy_from_slice(b"SUBROUTINES="); // still valid, prints something else
            }
            fs::write(bad.join(&rel), bytes).unwrap();
        }
        let (failures, _) = edge_differences(&jdk, &edge.dir, &bad, &edge.mains);
        let joined = failures.join("\n");
        assert!(
            joined.contains("FORMAT Switches"),
            "truncated Switches.class not reported:\n{joined}"
        );
        assert!(
            joined.contains("Switches differs after rewriting"),
            "{joined}"
        );
        assert!(
            joined.contains("OldJsr differs after rewriting"),
            "changed OldJsr output not reported:\n{joined}"
        );

        let harness = compile_harness(&jdk);
        let dirs = [
            scratch(&format!("boot-good-{}", jdk.key())),
            scratch(&format!("boot-regressed-{}", jdk.key())),
        ];
        for (dir, mode) in dirs.iter().zip(["--boot", "--boot-regressed"]) {
            let out = java(
                &jdk,
                &[
                    "-cp".as_ref(),
                    harness.as_os_str(),
                    "MakeBroken".as_ref(),
                    mode.as_ref(),
                    dir.as_os_str(),
                ],
            );
            check("MakeBroken", &out);
        }
        let (_, _, regressions) = boot_regressions(&jdk, &dirs[0], &dirs[1]);
        assert_eq!(regressions.len(), 1, "{regressions:?}");
        assert!(
            regressions[0].starts_with("VERIFY java.util.ForceLinkFine "),
            "{regressions:?}"
        );
        println!(
            "[{}] tampered classes caught: {} failures in loader mode, boot regression {}",
            jdk.version,
            failures.len(),
            &regressions[0][..40]
        );
    }
}

/// CodeLimit's first method cannot take the nops. Either the rewriter leaves it (or the class) alone and exits 0,
/// or it fails with a message naming the file; in both cases whatever it wrote must link and run the same.
#[test]
fn nop_rewrite_of_a_method_too_big_for_it() {
    for jdk in all_jdks() {
        let edge = compile_edge_classes(&jdk);
        let out_dir = scratch(&format!("limit-nop-{}", jdk.key()));
        let rw = rewrite_class(&["--edit", "nop"], &edge.limit_dir, &out_dir);
        let stderr = text(&rw.stderr);
        if rw.status.success() {
            println!("[{}] CodeLimit: rewrite-class exited 0", jdk.version);
            for line in stderr.lines() {
                println!("[{}]   {line}", jdk.version);
            }
        } else {
            assert!(
                stderr.contains("CodeLimit"),
                "a failure must name the file: {stderr}"
            );
            println!(
                "[{}] CodeLimit: rewrite-class refused ({}): {}",
                jdk.version,
                rw.status,
                stderr.lines().next().unwrap_or("")
            );
        }
        let out_class = out_dir.join("CodeLimit.class");
        if !out_class.exists() {
            assert!(
                !rw.status.success(),
                "exit 0 but no CodeLimit.class written"
            );
            continue;
        }
        let r = force_link(&jdk, &[&out_dir]);
        assert_eq!(r.exit, Some(0), "{}", r.stdout);
        assert_eq!(r.status("CodeLimit"), Some("OK"), "{}", r.stdout);
        let before = run_main(&jdk, &edge.limit_dir, LIMIT_CLASS);
        let after = run_main(&jdk, &out_dir, LIMIT_CLASS);
        assert_eq!(
            (before.0, &before.1),
            (after.0, &after.1),
            "CodeLimit output\n{}",
            after.2
        );
        let methods = javap_methods(&jdk, &out_class);
        for m in [
            "static int tooBigForNops(int)",
            "static int exactlyFullAfterNops(int)",
        ] {
            println!(
                "[{}]   after: {m} is {} bytes",
                jdk.version,
                code_length(&methods[m])
            );
        }
    }
}

// -------------------------------------------------------------------------------------------------------------
// javap, to check the generated fixtures

#[derive(Debug)]
struct Insn {
    offset: i64,
    op: String,
    operand: String,
}

impl Insn {
    fn is_branch(&self) -> bool {
        (self.op.starts_with("if") || self.op.starts_with("goto") || self.op.starts_with("jsr"))
            && self.operand.parse::<i64>().is_ok()
    }

    fn branch_offset(&self) -> i64 {
        self.operand.parse::<i64>().unwrap() - self.offset
    }
}

/// Method header line (as javap -c -p prints it, without the ';') -> its instructions.
fn javap_methods(jdk: &Jdk, class: &Path) -> BTreeMap<String, Vec<Insn>> {
    let out = run(Command::new(jdk.bin("javap"))
        .arg("-c")
        .arg("-p")
        .arg(class));
    check("javap", &out);
    let mut methods: BTreeMap<String, Vec<Insn>> = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in text(&out.stdout).lines() {
        let indent = line.len() - line.trim_start().len();
        let t = line.trim();
        if indent == 2 && t.ends_with(';') {
            let name = t.trim_end_matches(';').to_string();
            methods.insert(name.clone(), Vec::new());
            current = Some(name);
            continue;
        }
        let Some(m) = &current else { continue };
        let Some((off, rest)) = t.split_once(": ") else {
            continue;
        };
        let Ok(offset) = off.parse::<i64>() else {
            continue;
        };
        let mut words = rest.split_whitespace();
        let op = words.next().unwrap_or("").to_string();
        let operand = words.next().unwrap_or("").trim_end_matches(',').to_string();
        methods.get_mut(m).unwrap().push(Insn {
            offset,
            op,
            operand,
        });
    }
    methods
}

/// Code length, for methods that end with a one-byte return (all the generated ones do).
fn code_length(code: &[Insn]) -> i64 {
    let last = code.last().expect("method without code");
    assert!(last.op.ends_with("return"), "last instruction {last:?}");
    last.offset + 1
}

/// Places where --edit nop inserts a byte: after each array allocation, before each return.
fn inserts(code: &[Insn]) -> i64 {
    code.iter()
        .filter(|i| i.op.ends_with("newarray") || i.op.ends_with("return"))
        .count() as i64
}
