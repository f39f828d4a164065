//! Strict validation: every mistake is one line naming the file, line and column of the offending
//! key or value, with a hint.

use std::path::Path;

use instr_rules::{Rules, RulesError};

fn reject(text: &str) -> RulesError {
    let error = Rules::parse(text, "rules.yaml").expect_err("should be rejected");
    let message = error.to_string();
    assert!(
        !message.contains('\n') && !message.contains('\r'),
        "not one line: {message:?}"
    );
    assert!(message.contains("; hint: "), "no hint: {message}");
    assert!(!error.hint().is_empty());
    error
}

fn assert_at(error: &RulesError, line: u64, column: u64) {
    assert_eq!(
        (error.line(), error.column()),
        (Some(line), Some(column)),
        "{error}"
    );
    assert!(
        error
            .to_string()
            .starts_with(&format!("rules.yaml:{line}:{column}: ")),
        "{error}"
    );
}

#[test]
fn unknown_top_level_key_suggests_the_nearest() {
    let error = reject("# comment\nprbes: [objects]\n");
    assert_at(&error, 2, 1);
    assert!(error.problem().contains("`prbes`"), "{error}");
    assert!(error.hint().contains("did you mean `probes`?"), "{error}");
    for key in ["probes", "methods", "allocations", "output"] {
        assert!(error.hint().contains(&format!("`{key}`")), "{error}");
    }
}

#[test]
fn unknown_nested_key_suggests_the_nearest() {
    let error = reject("probes: [methods]\nmethods:\n  incude: [\"**\"]\n");
    assert_at(&error, 3, 3);
    assert!(error.hint().contains("did you mean `include`?"), "{error}");
    assert!(error.hint().contains("`bridges`"), "{error}");

    let error = reject("allocations:\n  depht: 3\n");
    assert_at(&error, 2, 3);
    assert!(error.hint().contains("did you mean `depth`?"), "{error}");

    // Nothing close: the valid keys, without a guess.
    let error = reject("zzzzzzzzzz: 1\n");
    assert_at(&error, 1, 1);
    assert!(!error.hint().contains("did you mean"), "{error}");
}

#[test]
fn wrong_types() {
    let error = reject("probes: objects\n");
    assert_at(&error, 1, 9);
    assert!(error.hint().contains("list"), "{error}");

    let error = reject("methods:\n  bridges: maybe\n");
    assert_at(&error, 2, 12);

    let error = reject("methods:\n  synthetic: yes\n");
    assert_at(&error, 2, 14);
    assert!(error.hint().contains("`true` or `false`"), "{error}");

    let error = reject("allocations:\n  depth: four\n");
    assert_at(&error, 2, 10);

    let error = reject("methods: [\"**\"]\n");
    assert_at(&error, 1, 10);

    let error = reject("- objects\n");
    assert_at(&error, 1, 1);

    let error = reject("methods:\n  include: [null]\n");
    assert_at(&error, 2, 13);
}

#[test]
fn bad_pattern_points_at_the_pattern() {
    let text = "probes: [methods]\nmethods:\n  include:\n    - com.foo.**\n    - com/foo/Bar\n";
    let error = reject(text);
    assert_at(&error, 5, 7);
    assert!(error.problem().contains("com/foo/Bar"), "{error}");
    assert!(error.hint().contains("com.example.**"), "{error}");

    let error = reject("allocations:\n  exclude: [\"ok.**\", \"a.***\"]\n");
    // The opening quote of the second pattern.
    assert_at(&error, 2, 22);
    assert!(error.problem().contains("***"), "{error}");

    for bad in [
        "\"\"",
        "\"a b\"",
        "\"a.B#\"",
        "\"a.B#m(I\"",
        "\"a.B#m(I)VX\"",
        "\"a..B\"",
    ] {
        let error = reject(&format!("methods:\n  exclude:\n    - {bad}\n"));
        assert_at(&error, 3, 7);
    }
}

#[test]
fn duplicate_keys() {
    let error = reject("probes: [objects]\noutput: a-%p\noutput: b-%p\n");
    assert_at(&error, 3, 1);
    assert!(error.problem().contains("output"), "{error}");

    let error = reject("methods:\n  include: []\n  include: []\n");
    assert_eq!(error.line(), Some(3), "{error}");
}

#[test]
fn depth_out_of_range() {
    for (depth, ok) in [
        ("0", true),
        ("65", false),
        ("-1", false),
        ("1", true),
        ("64", true),
    ] {
        let text = format!("allocations:\n  depth: {depth}\n");
        if ok {
            assert!(Rules::parse(&text, "rules.yaml").is_ok(), "{depth}");
        } else {
            let error = reject(&text);
            assert_at(&error, 2, 10);
            assert!(error.problem().contains("out of range"), "{error}");
            assert!(error.hint().contains("0 (per class only) to 64"), "{error}");
        }
    }
}

#[test]
fn unknown_probe_name() {
    let error = reject("probes: [objects, methds]\n");
    assert_at(&error, 1, 19);
    assert!(error.problem().contains("methds"), "{error}");
    assert!(error.hint().contains("did you mean `methods`?"), "{error}");

    let error = reject("probes:\n  - arrays\n  - arrays\n");
    assert_at(&error, 3, 5);
    assert!(error.problem().contains("twice"), "{error}");
}

#[test]
fn bad_output_template() {
    let error = reject("output: \"out-%q\"\n");
    assert_at(&error, 1, 9);
    assert!(error.problem().contains("%q"), "{error}");
    assert!(error.hint().contains("%p"), "{error}");
    reject("output: \"out-%\"\n");
    reject("output: \"\"\n");
}

#[test]
fn more_than_one_document() {
    let error = reject("probes: [objects]\n---\nprobes: []\n");
    assert_eq!(error.line(), Some(3), "{error}");
}

#[test]
fn file_errors_name_the_file() {
    let dir = std::env::temp_dir().join(format!("instr-rules-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bad.yaml");
    std::fs::write(&path, "probes: [objects]\nmethod: {}\n").unwrap();
    let error = Rules::from_file(&path).unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with(&format!("{}:2:1: ", path.display())),
        "{error}"
    );
    assert!(error.hint().contains("did you mean `methods`?"), "{error}");

    let missing = dir.join("missing.yaml");
    let error = Rules::from_file(&missing).unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with(&format!("{}: ", missing.display())),
        "{error}"
    );
    assert!(!error.to_string().contains('\n'));

    std::fs::write(&path, b"probes: [\xff]\n").unwrap();
    let error = Rules::from_file(&path).unwrap_err();
    assert!(error.problem().contains("UTF-8"), "{error}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn error_is_a_std_error() {
    let error: Box<dyn std::error::Error> = Box::new(reject("prbes: []\n"));
    assert!(
        error
            .to_string()
            .starts_with("rules.yaml:1:1: unknown key `prbes`; hint: valid keys here are `probes`"),
        "{error}"
    );
}

/// The agent reads the rules file before the JVM starts: what is not a small regular file is refused
/// without being read (`/dev/zero` grew a JVM to 9 GB; a FIFO blocked it forever), and every refusal
/// is one line naming the problem.
#[test]
fn only_small_regular_files_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo.yaml");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let big = dir.path().join("big.yaml");
    // Comments only: valid if it were read, so only its size can refuse it.
    std::fs::write(&big, "#".repeat(1 << 20) + "\n").unwrap();
    let cases = [
        (Path::new("/dev/zero"), "a device"),
        (fifo.as_path(), "a FIFO"),
        (dir.path(), "a directory"),
        (big.as_path(), "larger than 1048576"),
    ];
    for (path, problem) in cases {
        let error = Rules::from_file(path).unwrap_err();
        assert!(
            error.problem().contains(problem),
            "{}: {error}",
            path.display()
        );
        assert!(!error.to_string().contains('\n'));
    }
    let just_small = dir.path().join("small.yaml");
    std::fs::write(&just_small, "#".repeat((1 << 20) - 1) + "\n").unwrap();
    assert!(
        Rules::from_file(&just_small).is_ok(),
        "a file of exactly 1 MiB"
    );
}

#[test]
fn bytes_that_are_not_utf8_are_located() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.yaml");
    std::fs::write(&path, b"probes: [objects]\nallocations:\n  depth: 4\xff\n").unwrap();
    let error = Rules::from_file(&path).unwrap_err();
    assert_eq!(
        (error.line(), error.column()),
        (Some(3), Some(11)),
        "{error}"
    );
    assert!(
        error.problem().contains("0xff") && error.problem().contains("depth: 4"),
        "{error}"
    );
}

#[test]
fn type_errors_name_their_key() {
    for (yaml, key) in [
        ("allocations:\n  live: lots\n", "`live`"),
        (
            "threads:\n  deadlocks:\n    watch_ms: 99999999999999999999999\n",
            "`watch_ms`",
        ),
        ("methods:\n  bridges: 1\n", "`bridges`"),
        ("threads: -1\n", "`threads`"),
    ] {
        let error = reject(yaml);
        assert!(error.problem().contains(key), "{yaml:?}: {error}");
    }
    let long = format!(
        "probes: [objects]\nallocations:\n  include: [\"{}\"]\n",
        "x".repeat(70_000)
    );
    let error = reject(&long);
    assert!(
        error
            .problem()
            .starts_with("`allocations.include`: a pattern of 70000 bytes"),
        "{error}"
    );
    assert!(
        error.to_string().len() < 1500,
        "{} bytes",
        error.to_string().len()
    );
}
