//! The probes on real JVMs: `rewrite-class --rules rules/all.yaml` (every probe on every method) must keep
//! every class linkable under `-Xverify:all` and running, and the counts the probes produce must be exact.
//!
//! * every class of every installed JDK's runtime image, rewritten, links in a VM that boots from the
//!   rewritten java.base and runs its probes (against the counting test HeapProxy);
//! * every class of the jars of the workload packages (`scripts/setup.sh` installs them) links;
//! * test-classes/probes programs give exact object, array and call counts under -Xint, C1 and C2;
//! * ids are stable (rewriting twice gives identical bytes) and each probe's bytecode is pinned by a snapshot.
//!
//! `cargo test --test probes -- --nocapture` prints counts. `INSTR_TEST_JDKS=17` limits the JDKs;
//! `INSTR_UPDATE_SNAPSHOTS=1` rewrites tests/snapshots/ from the current output.

mod support;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use support::*;

fn all_rules() -> PathBuf {
    workspace().join("rules/all.yaml")
}

/// The counting stand-in for HeapProxy, compiled into java.base's `java.lang` for `jdk`.
fn test_proxy(jdk: &Jdk) -> PathBuf {
    static DONE: PerKey = std::sync::OnceLock::new();
    once_per_key(&DONE, &jdk.key(), || {
        let out = target_dir().join(format!("test-proxy-{}", jdk.key()));
        let _ = fs::remove_dir_all(&out);
        let src = workspace().join("test-classes/proxy");
        let patch = format!("java.base={}", src.display());
        javac(
            jdk,
            &[src.join("java/lang/HeapProxy.java")],
            &out,
            &["--patch-module", &patch],
        );
        out
    })
}

/// test-classes/probes compiled with `jdk` against the test proxy, then rewritten with all probes.
/// Returns (original classes, rewritten classes, id map text).
fn probe_programs(jdk: &Jdk, name: &str) -> (PathBuf, PathBuf, String) {
    probe_programs_with(jdk, name, &[])
}

/// [`probe_programs`] with more rewrite-class options (`--calls SHAPE`).
fn probe_programs_with(jdk: &Jdk, name: &str, options: &[&str]) -> (PathBuf, PathBuf, String) {
    let base = target_dir().join(format!("probe-programs-{name}-{}", jdk.key()));
    let (orig, new, ids) = (base.join("orig"), base.join("new"), base.join("ids.tsv"));
    let _ = fs::remove_dir_all(&base);
    let patch = format!(
        "java.base={}",
        workspace().join("test-classes/proxy").display()
    );
    javac(
        jdk,
        &java_files(&workspace().join("test-classes/probes")),
        &orig,
        &["--patch-module", &patch],
    );
    let rules = all_rules();
    let rw = rewrite_class(
        &[
            "--rules",
            rules.to_str().unwrap(),
            "--ids",
            ids.to_str().unwrap(),
        ]
        .iter()
        .chain(options)
        .copied()
        .collect::<Vec<_>>(),
        &orig,
        &new,
    );
    check("rewrite-class --rules all.yaml test-classes/probes", &rw);
    (orig, new, fs::read_to_string(&ids).unwrap())
}

/// A directory to `--patch-module java.base=` with: the test proxy, and `java.lang.Object` rewritten with
/// all probes (its allocation probe counts every object).
fn counting_java_base(jdk: &Jdk) -> PathBuf {
    static DONE: PerKey = std::sync::OnceLock::new();
    once_per_key(&DONE, &jdk.key(), || make_counting_java_base(jdk))
}

fn make_counting_java_base(jdk: &Jdk) -> PathBuf {
    let dir = target_dir().join(format!("counting-java-base-{}", jdk.key()));
    let _ = fs::remove_dir_all(&dir);
    let proxy = test_proxy(jdk);
    let lang = dir.join("java/lang");
    fs::create_dir_all(&lang).unwrap();
    fs::copy(
        proxy.join("java/lang/HeapProxy.class"),
        lang.join("HeapProxy.class"),
    )
    .unwrap();
    let object = extract_jdk_image(jdk).join("java.base/java/lang/Object.class");
    let rules = all_rules();
    let rw = rewrite_class(
        &["--rules", rules.to_str().unwrap()],
        &object,
        &lang.join("Object.class"),
    );
    check("rewrite-class java/lang/Object.class", &rw);
    assert_ne!(
        fs::read(&object).unwrap(),
        fs::read(lang.join("Object.class")).unwrap(),
        "all.yaml left java.lang.Object unchanged"
    );
    dir
}

/// The execution modes the counts must be exact in.
const MODES: &[(&str, &[&str])] = &[
    ("interpreter", &["-Xint"]),
    ("tiered", &[]),
    ("C1", &["-Xcomp", "-XX:TieredStopAtLevel=1"]),
    ("C2", &["-Xcomp", "-XX:-TieredCompilation"]),
];

fn run_counted(jdk: &Jdk, java_base: &Path, classes: &Path, mode: &[&str], main: &str) -> String {
    let patch = format!("java.base={}", java_base.display());
    let mut cmd = Command::new(jdk.bin("java"));
    cmd.arg("-Xverify:all")
        .args(mode)
        .arg("--patch-module")
        .arg(&patch)
        .arg("-cp")
        .arg(classes)
        .arg(main);
    let out = run(&mut cmd);
    check(&format!("[{}] {main} {mode:?}", jdk.version), &out);
    text(&out.stdout)
}

// ---------------------------------------------------------------------------------------------------------------
// Exact counts

/// Exact instance counts of Allocations (class as `Class.getTypeName()` prints it).
const EXPECTED_INSTANCES: &[(&str, u64)] = &[
    ("Allocations$Foo", 1000),
    ("Allocations$Bar", 250),
    ("Allocations$Point", 40),
    ("Allocations$Twin", 6),    // `twin` and its 5 clones
    ("Allocations$Triplet", 4), // `triplet` and its 3 clones
    ("Allocations$Quad", 3),    // `quad` and its 2 clones, through a superclass without clone()
    ("Allocations$Low", 3),     // `low` and its 2 clones, through Mid's clone(): once each
    ("boolean[]", 3),
    ("byte[]", 3),
    ("char[]", 24), // 3 in the loop, `chars` and its 20 clones
    ("short[]", 3),
    ("int[]", 6),  // 3 in the loop + the 3 rows of new int[3][4]
    ("long[]", 8), // 3 in the loop + 4 of new long[2][2][2] + the program's own counts array
    ("float[]", 3),
    ("double[]", 3),
    ("java.lang.String[]", 8), // 1 new, 7 from Array.newInstance
    ("Allocations$Foo[]", 1),
    ("int[][]", 2),
    ("Allocations$Foo[][][]", 1),
    ("Allocations$Foo[][]", 2),
    ("long[][][]", 1),
    ("long[][]", 2),
];

/// Allocation-site counts in Allocations, summed per (method, allocated type): every `new` counts when it
/// runs (object sites, on because all.yaml's depth is above 0) and every array instruction once per array
/// it returns (a multianewarray site counts its outer array only).
const EXPECTED_SITES: &[(&str, &str, u64)] = &[
    ("main", "LAllocations$Foo;", 1000),
    ("main", "LAllocations$Bar;", 250),
    ("main", "LAllocations$Twin;", 1),
    ("main", "LAllocations$Triplet;", 1),
    ("main", "LAllocations$Quad;", 1),
    ("main", "LAllocations$Low;", 1),
    ("lambda$main$0", "LAllocations$Point;", 40),
    ("main", "[Z", 3),
    ("main", "[B", 3),
    ("main", "[C", 4),
    ("main", "[S", 3),
    ("main", "[I", 3),
    ("main", "[J", 6), // 3 in the loop, the counts array and the two site-count arrays
    ("main", "[F", 3),
    ("main", "[D", 3),
    ("main", "[Ljava/lang/String;", 1),
    ("main", "[LAllocations$Foo;", 1),
    ("main", "[[I", 2),
    ("main", "[[[LAllocations$Foo;", 1),
    ("main", "[[[J", 1),
    ("main", "[Ljava/lang/Class;", 1),
];

/// Sums the program's "<prefix> <id> <n>" lines ("site" or "built") per (method name, allocated type) of
/// Allocations' sites.
fn site_counts(output: &str, prefix: &str, ids_tsv: &str) -> BTreeMap<(String, String), u64> {
    let methods = method_ids(ids_tsv);
    let sites: HashMap<u32, (u32, String)> = ids_tsv
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (f.len() == 6 && f[0] == "site").then(|| {
                (
                    f[1].parse().unwrap(),
                    (f[2].parse().unwrap(), f[5].to_string()),
                )
            })
        })
        .collect();
    let mut out = BTreeMap::new();
    for l in output
        .lines()
        .filter_map(|l| l.strip_prefix(prefix)?.strip_prefix(' '))
    {
        let (id, n) = l.split_once(' ').unwrap();
        let (method, allocated) = &sites[&id.parse::<u32>().unwrap()];
        let (class, name, _) = &methods[method];
        if class == "Allocations" {
            *out.entry((name.clone(), allocated.clone())).or_default() += n.parse::<u64>().unwrap();
        }
    }
    out
}

/// (class, method, descriptor, enters, exits, unwinds) for Calls.
const EXPECTED_CALLS: &[(&str, &str, &str, u64, u64, u64)] = &[
    ("Calls", "fib", "(I)I", 21891, 21891, 0),
    ("Calls", "level3", "(I)V", 7, 0, 7),
    ("Calls", "level2", "(I)V", 7, 0, 7),
    ("Calls", "level1", "(I)V", 7, 0, 7),
    ("Calls", "catcher", "(I)I", 7, 7, 0),
    // Constructors count once `this` is initialised: v = -1 throws before super(), v = 13 inside it.
    ("Calls$BeforeSuper", "<init>", "(I)V", 3, 3, 0),
    ("Calls$BeforeSuper", "check", "(I)I", 5, 4, 1),
    ("Calls$AfterSuper", "<init>", "(I)V", 4, 3, 1),
    ("Calls$Base", "<init>", "(I)V", 10, 8, 2),
    ("Calls$Delegating", "<init>", "()V", 1, 1, 0),
    ("Calls$Delegating", "<init>", "(I)V", 1, 1, 0),
    ("Calls", "syncMethod", "()V", 5, 5, 0),
    ("Calls", "syncThrows", "()V", 4, 0, 4),
    ("Calls", "syncBlock", "(Z)V", 6, 3, 3),
    ("Calls", "lambda$main$0", "(I)I", 10, 10, 0),
    ("Calls$Shape", "square", "(D)LCalls$Shape;", 3, 3, 0),
    ("Calls$Shape", "lambda$square$0", "(D)D", 3, 3, 0),
    ("Calls$Shape", "describe", "()Ljava/lang/String;", 3, 3, 0),
    ("Calls$Shape", "kind", "()Ljava/lang/String;", 3, 3, 0),
    ("Calls$Op$1", "apply", "(II)I", 1, 1, 0),
    ("Calls$Op$2", "apply", "(II)I", 1, 1, 0),
    ("Calls$Op", "<clinit>", "()V", 1, 1, 0),
    ("Calls$Inner", "twice", "(I)I", 1, 1, 0),
    ("Calls$Point", "<init>", "(II)V", 1, 1, 0),
];

const EXPECTED_CALLS_RESULT: &str = "result fib=6765 caught=14 ctorFailures=4 counter=15 sum=285 \
                                     shapes=shape:1 shape:4 shape:9 ops=11 twice=42";

type MethodKey = (String, String, String);

/// Parses rewrite-class's `--ids` map: method id -> (class, name, descriptor).
fn method_ids(tsv: &str) -> HashMap<u32, MethodKey> {
    tsv.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (f.len() == 5 && f[0] == "method").then(|| {
                (
                    f[1].parse().unwrap(),
                    (f[2].to_string(), f[3].to_string(), f[4].to_string()),
                )
            })
        })
        .collect()
}

/// Parses HeapProxy.methodReport() lines: (class, name, descriptor) -> (enters, exits, unwinds).
fn call_counts(
    output: &str,
    ids: &HashMap<u32, MethodKey>,
) -> BTreeMap<MethodKey, (u64, u64, u64)> {
    output
        .lines()
        .filter_map(|l| l.strip_prefix("method "))
        .map(|l| {
            let n: Vec<u64> = l.split(' ').map(|x| x.parse().unwrap()).collect();
            let key = ids
                .get(&(n[0] as u32))
                .unwrap_or_else(|| panic!("method id {} is not in the id map", n[0]))
                .clone();
            (key, (n[1], n[2], n[3]))
        })
        .collect()
}

#[test]
fn counts_are_exact_in_every_execution_mode() {
    for jdk in jdks() {
        let java_base = counting_java_base(&jdk);
        let (_, classes, ids_text) = probe_programs(&jdk, "counts");
        let ids = method_ids(&ids_text);
        for (mode, flags) in MODES {
            let out = run_counted(&jdk, &java_base, &classes, flags, "Allocations");
            let got: BTreeMap<&str, u64> = out
                .lines()
                .filter_map(|l| l.strip_prefix("count "))
                .map(|l| {
                    let (name, n) = l.rsplit_once(' ').unwrap();
                    (name, n.parse().unwrap())
                })
                .collect();
            let want: BTreeMap<&str, u64> = EXPECTED_INSTANCES.iter().copied().collect();
            assert_eq!(got, want, "[{}] {mode}: Allocations counts", jdk.version);
            let want: BTreeMap<(String, String), u64> = EXPECTED_SITES
                .iter()
                .map(|&(m, t, n)| ((m.to_string(), t.to_string()), n))
                .collect();
            assert_eq!(
                site_counts(&out, "site", &ids_text),
                want,
                "[{}] {mode}: Allocations site counts",
                jdk.version
            );
            // all.yaml tracks live objects: each object is handed over once its constructor is done.
            let objects = want.into_iter().filter(|((_, t), _)| t.starts_with('L'));
            assert_eq!(
                site_counts(&out, "built", &ids_text),
                objects.collect(),
                "[{}] {mode}: Allocations objects built per site",
                jdk.version
            );

            let out = run_counted(&jdk, &java_base, &classes, flags, "Calls");
            assert_eq!(
                out.lines().next(),
                Some(EXPECTED_CALLS_RESULT),
                "[{}] {mode}: Calls behaved differently",
                jdk.version
            );
            let counts = call_counts(&out, &ids);
            for &(class, name, desc, enters, exits, unwinds) in EXPECTED_CALLS {
                let key = (class.to_string(), name.to_string(), desc.to_string());
                assert_eq!(
                    counts.get(&key).copied().unwrap_or_default(),
                    (enters, exits, unwinds),
                    "[{}] {mode}: {class}.{name}{desc} (enters, exits, unwinds)",
                    jdk.version
                );
            }
            // Every call that started after the reset has ended, normally or by an exception.
            for (key, (enters, exits, unwinds)) in &counts {
                assert_eq!(
                    *enters,
                    exits + unwinds,
                    "[{}] {mode}: {key:?} entered {enters} times, left {exits} + {unwinds}",
                    jdk.version
                );
            }
            println!(
                "[{}] {mode}: Allocations and Calls exact ({} methods counted)",
                jdk.version,
                counts.len()
            );
        }
    }
}

/// The call-probe shapes of the agent's modes: `counts` (entry and unwind only) and `times` (leaves
/// counted only) count every call and exceptional exit exactly; a counted-only method has no exit probe.
#[test]
fn call_probe_shapes_count_exactly() {
    const LEAVES: &[(&str, &str)] = &[
        ("Calls", "lambda$main$0"),
        ("Calls$Shape", "lambda$square$0"),
        ("Calls$Shape", "kind"),
        ("Calls$Op$1", "apply"),
        ("Calls$Op$2", "apply"),
        ("Calls$Inner", "twice"),
        ("Calls$Point", "<init>"),
    ];
    for jdk in jdks() {
        let java_base = counting_java_base(&jdk);
        for shape in ["counts", "times"] {
            let (_, classes, ids_text) =
                probe_programs_with(&jdk, &format!("shape-{shape}"), &["--calls", shape]);
            let ids = method_ids(&ids_text);
            let counted: HashSet<MethodKey> = ids_text
                .lines()
                .filter_map(|l| l.strip_prefix("counted\t"))
                .map(|id| ids[&id.parse::<u32>().unwrap()].clone())
                .collect();
            for &(class, name, desc, ..) in EXPECTED_CALLS {
                let key = (class.to_string(), name.to_string(), desc.to_string());
                let leaf = LEAVES.contains(&(class, name));
                assert_eq!(
                    counted.contains(&key),
                    shape == "counts" || leaf,
                    "[{}] --calls {shape}: {class}.{name}{desc} counted only?",
                    jdk.version
                );
            }
            for (mode, flags) in MODES {
                let what = format!("[{}] --calls {shape} {mode}", jdk.version);
                let out = run_counted(&jdk, &java_base, &classes, flags, "Calls");
                assert_eq!(out.lines().next(), Some(EXPECTED_CALLS_RESULT), "{what}");
                let counts = call_counts(&out, &ids);
                for &(class, name, desc, enters, exits, unwinds) in EXPECTED_CALLS {
                    let key = (class.to_string(), name.to_string(), desc.to_string());
                    let exits = if counted.contains(&key) { 0 } else { exits };
                    assert_eq!(
                        counts.get(&key).copied().unwrap_or_default(),
                        (enters, exits, unwinds),
                        "{what}: {class}.{name}{desc} (enters, exits, unwinds)"
                    );
                }
                println!("{what}: exact, {} methods counted only", counted.len());
            }
        }
    }
}

#[test]
fn rewriting_twice_gives_identical_bytes() {
    for jdk in jdks() {
        // Ids follow the order classes are first seen; rewrite-class visits inputs sorted, so the same
        // inputs give the same ids and bytes in every run. (Within one process, a class rewritten again
        // finds its ids in the registry: see rewriter/tests/probes.rs.)
        let (orig, first, ids_first) = probe_programs(&jdk, "first");
        let (_, second, ids_second) = probe_programs(&jdk, "second");
        assert_eq!(ids_first, ids_second, "id maps differ between two runs");
        let files = files_under(&first);
        assert_eq!(files, files_under(&second));
        let mut changed = 0;
        for f in &files {
            let (a, b) = (
                fs::read(first.join(f)).unwrap(),
                fs::read(second.join(f)).unwrap(),
            );
            assert!(a == b, "{} differs between two runs", f.display());
            changed += usize::from(fs::read(orig.join(f)).ok() != Some(a));
        }
        assert!(changed > 10, "only {changed} classes were instrumented");
    }
}

#[test]
fn probe_bytecode_matches_the_snapshot() {
    // javac's output differs between releases, so the snapshot is taken from JDK 17's javac.
    let Some(jdk) = jdks().into_iter().find(|j| j.feature() == 17) else {
        println!("no JDK 17: snapshot not checked");
        return;
    };
    let dir = scratch("snapshot");
    javac(
        &jdk,
        &[workspace().join("test-classes/probes/Snapshot.java")],
        &dir,
        &[],
    );
    let rules = all_rules();
    let out = rewrite_class(
        &["--rules", rules.to_str().unwrap(), "--dump", "*"],
        &dir.join("Snapshot.class"),
        &dir.join("Snapshot.rewritten.class"),
    );
    check("rewrite-class --dump", &out);
    let listing = text(&out.stdout).replace(&dir.display().to_string(), "<dir>");
    let snapshot = workspace().join("tests/snapshots/probes-Snapshot.jdk17.txt");
    if std::env::var_os("INSTR_UPDATE_SNAPSHOTS").is_some() {
        fs::create_dir_all(snapshot.parent().unwrap()).unwrap();
        fs::write(&snapshot, &listing).unwrap();
    }
    let want = fs::read_to_string(&snapshot).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (INSTR_UPDATE_SNAPSHOTS=1 creates it)",
            snapshot.display()
        )
    });
    assert_eq!(
        listing, want,
        "probe bytecode changed; review and set INSTR_UPDATE_SNAPSHOTS=1"
    );
    // The rewritten class still runs and prints what the original does, given a HeapProxy.
    let java_base = counting_java_base(&jdk);
    let run_dir = scratch("snapshot-run");
    fs::copy(
        dir.join("Snapshot.rewritten.class"),
        run_dir.join("Snapshot.class"),
    )
    .unwrap();
    assert_eq!(
        run_counted(&jdk, &java_base, &run_dir, &[], "Snapshot"),
        "0\n"
    );
}

// ---------------------------------------------------------------------------------------------------------------
// Verification of whole class corpora

/// One line of counts per corpus and JDK, then every method rewrite-class left uninstrumented.
fn print_link_summary(
    jdk: &Jdk,
    what: &str,
    rewrite_stderr: &str,
    before: &LinkReport,
    after: &LinkReport,
    regressions: usize,
) {
    println!(
        "[{}] {what}: {} | {} classes checked, {} OK before, {} OK after, {regressions} regressions",
        jdk.version,
        rewrite_stderr.lines().last().unwrap_or(""),
        before.classes.len(),
        before.count("OK"),
        after.count("OK"),
    );
    for w in rewrite_stderr.lines().filter(|l| l.contains("warning:")) {
        println!("[{}] left uninstrumented: {w}", jdk.version);
    }
}

/// Warnings other than the 64 KB limit mean a method was left uninstrumented for a reason we do not accept.
fn unexpected_warnings(stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .filter(|l| l.contains("warning:") && !l.contains("65535-byte limit"))
        .map(str::to_string)
        .collect()
}

#[test]
fn all_probes_keep_every_jdk_class_linkable() {
    let mut failures = Vec::new();
    for jdk in jdks() {
        let image = extract_jdk_image(&jdk);
        let out_dir = target_dir().join("jdk-all-probes").join(jdk.key());
        let rules = all_rules();
        let rw = rewrite_class(&["--rules", rules.to_str().unwrap()], &image, &out_dir);
        let stderr = text(&rw.stderr);
        if !rw.status.success() {
            failures.push(format!(
                "[{}] rewrite-class failed:\n{}",
                jdk.version,
                tail(&stderr, 30)
            ));
            continue;
        }
        failures.extend(
            unexpected_warnings(&stderr)
                .into_iter()
                .map(|w| format!("[{}] {w}", jdk.version)),
        );
        // The rewritten java.base runs its probes while the VM boots: give it a HeapProxy.
        fs::copy(
            test_proxy(&jdk).join("java/lang/HeapProxy.class"),
            out_dir.join("java.base/java/lang/HeapProxy.class"),
        )
        .unwrap();
        let before = force_link_boot(&jdk, &image);
        before.assert_completed(&format!(
            "[{}] ForceLink over the original image",
            jdk.version
        ));
        let after = force_link_boot(&jdk, &out_dir);
        if after.summary.is_none() {
            failures.push(format!(
                "[{}] the VM did not get through the rewritten image:\n{}\n{}",
                jdk.version,
                tail(&after.stdout, 20),
                tail(&after.stderr, 20)
            ));
            continue;
        }
        let regressions = before.regressions(&after);
        print_link_summary(
            &jdk,
            "all probes",
            &stderr,
            &before,
            &after,
            regressions.len(),
        );
        if regressions.is_empty() {
            let _ = fs::remove_dir_all(&out_dir);
        } else {
            failures.push(format!(
                "[{}] {} classes linked before but not after (image kept in {}):\n{}",
                jdk.version,
                regressions.len(),
                out_dir.display(),
                regressions
                    .iter()
                    .take(30)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join("\n")
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The Debian packages of the workload kit (`scripts/setup.sh` installs them).
const WORKLOAD_PACKAGES: &[&str] = &[
    "libh2-java",
    "liblucene8-java",
    "libxalan2-java",
    "fop",
    "libbatik-java",
    "libsunflow-java",
    "libasm-java",
    "libjavassist-java",
    "libbcel-java",
    "libbyte-buddy-java",
];

/// Every distinct jar file the workload packages install.
fn workload_jars() -> Vec<PathBuf> {
    let mut jars = std::collections::BTreeSet::new();
    for p in WORKLOAD_PACKAGES {
        let out = run(Command::new("dpkg").arg("-L").arg(p));
        assert!(
            out.status.success(),
            "package {p} is not installed: run scripts/setup.sh"
        );
        for line in text(&out.stdout).lines() {
            let path = Path::new(line);
            if path.extension().is_some_and(|e| e == "jar") && path.is_file() {
                jars.insert(fs::canonicalize(path).unwrap());
            }
        }
    }
    jars.into_iter().collect()
}

fn extract_jar(jar: &Path, dir: &Path) {
    let file = fs::File::open(jar).unwrap();
    let mut zip = zip::ZipArchive::new(file).unwrap_or_else(|e| panic!("{}: {e}", jar.display()));
    for i in 0..zip.len() {
        let mut entry = zip.by_index(i).unwrap();
        let Some(name) = entry.enclosed_name() else {
            continue;
        };
        // Multi-release variants and module descriptors are not loadable as plain classes.
        if name.extension().is_none_or(|e| e != "class")
            || name.starts_with("META-INF")
            || name.ends_with("module-info.class")
        {
            continue;
        }
        let target = dir.join(name);
        fs::create_dir_all(target.parent().unwrap()).unwrap();
        let mut out = fs::File::create(&target).unwrap();
        std::io::copy(&mut entry, &mut out).unwrap();
    }
}

#[test]
fn all_probes_keep_every_workload_jar_class_linkable() {
    let jars = workload_jars();
    assert!(jars.len() >= 10, "only {} workload jars found", jars.len());
    let base = scratch("workload-jars");
    let (orig, new) = (base.join("orig"), base.join("new"));
    for jar in &jars {
        let name = jar.file_name().unwrap().to_string_lossy().replace('.', "_");
        extract_jar(jar, &orig.join(name));
    }
    let rules = all_rules();
    let rw = rewrite_class(&["--rules", rules.to_str().unwrap()], &orig, &new);
    let stderr = text(&rw.stderr);
    check("rewrite-class over the workload jars", &rw);
    let unexpected = unexpected_warnings(&stderr);
    assert!(
        unexpected.is_empty(),
        "methods left uninstrumented:\n{}",
        unexpected.join("\n")
    );
    let jar_dirs = |root: &Path| -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = fs::read_dir(root)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
        v.sort();
        v
    };
    let mut failures = Vec::new();
    for jdk in jdks() {
        let (o, n) = (jar_dirs(&orig), jar_dirs(&new));
        let before = force_link(&jdk, &o.iter().map(PathBuf::as_path).collect::<Vec<_>>());
        before.assert_completed(&format!(
            "[{}] ForceLink over the original jars",
            jdk.version
        ));
        let after = force_link(&jdk, &n.iter().map(PathBuf::as_path).collect::<Vec<_>>());
        after.assert_completed(&format!(
            "[{}] ForceLink over the rewritten jars",
            jdk.version
        ));
        let regressions = before.regressions(&after);
        let what = format!("workload jars ({} jars)", jars.len());
        print_link_summary(&jdk, &what, &stderr, &before, &after, regressions.len());
        failures.extend(
            regressions
                .into_iter()
                .map(|r| format!("[{}] {r}", jdk.version)),
        );
    }
    assert!(
        failures.is_empty(),
        "{}",
        failures
            .iter()
            .take(40)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}
