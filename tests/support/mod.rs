//! Helpers shared by the integration tests: the JDKs on this machine, their class images, javac/java, the Java
//! verifier harness in `tests/harness/`, and the `rewrite-class` binary.
//!
//! Everything expensive (extracting an image, compiling the harness or the edge-case classes) happens at most once
//! per test binary and JDK; image extraction is also cached across runs under `target/jdk-corpus/<version>/`.
#![allow(dead_code)]

use std::collections::{BTreeMap, HashMap};
use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// Root of the workspace (the `instr-cli` package).
pub fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Cargo's target directory (the parent of `CARGO_TARGET_TMPDIR`).
pub fn target_dir() -> PathBuf {
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    tmp.parent().map(Path::to_path_buf).unwrap_or(tmp)
}

/// A fresh, empty scratch directory under `CARGO_TARGET_TMPDIR` (removed first if a previous run left it).
/// Each call gets its own directory, numbered in call order: the tests of one binary run in parallel, and two
/// of them asking for the same name must not read each other's files.
pub fn scratch(name: &str) -> PathBuf {
    static CALLS: AtomicUsize = AtomicUsize::new(0);
    let n = CALLS.fetch_add(1, Ordering::Relaxed);
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}-{n}"));
    if dir.exists() {
        fs::remove_dir_all(&dir).unwrap_or_else(|e| panic!("removing {}: {e}", dir.display()));
    }
    fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("creating {}: {e}", dir.display()));
    dir
}

/// The `rewrite-class` binary built for this test run.
pub fn rewrite_class_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_rewrite-class"))
}

/// libinstr.so, built for the profile of this test binary. `cargo test` builds a cdylib's tests but not
/// the library file itself, so the first call runs `cargo build -p instr-agent` (a no-op when fresh).
pub fn agent_lib() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let profile_dir = rewrite_class_bin().parent().unwrap().to_path_buf();
            let mut cmd = Command::new(env!("CARGO"));
            cmd.arg("build")
                .arg("-p")
                .arg("instr-agent")
                .current_dir(workspace());
            if profile_dir.ends_with("release") {
                cmd.arg("--release");
            }
            check("cargo build -p instr-agent", &run(&mut cmd));
            let lib = profile_dir.join("libinstr.so");
            assert!(lib.exists(), "{} was not built", lib.display());
            lib
        })
        .clone()
}

/// Runs `rewrite-class ARGS... INPUT -o OUTPUT` (OUTPUT removed first).
pub fn rewrite_class(args: &[&str], input: &Path, output: &Path) -> Output {
    if output.is_dir() {
        fs::remove_dir_all(output).unwrap();
    } else if output.exists() {
        fs::remove_file(output).unwrap();
    }
    let mut cmd = Command::new(rewrite_class_bin());
    cmd.args(args).arg(input).arg("-o").arg(output);
    run(&mut cmd)
}

/// Runs a command to completion, panicking only if it cannot be started.
pub fn run(cmd: &mut Command) -> Output {
    cmd.output()
        .unwrap_or_else(|e| panic!("cannot run {:?}: {e}", cmd.get_program()))
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Panics with the command's output unless it exited 0.
pub fn check(what: &str, out: &Output) {
    if !out.status.success() {
        panic!(
            "{what} failed ({}):\n--- stdout\n{}\n--- stderr\n{}",
            out.status,
            text(&out.stdout),
            text(&out.stderr)
        );
    }
}

// ---------------------------------------------------------------------------------------------------------------
// JDKs

/// An installed JDK: its home and its full version (`release`'s JAVA_VERSION, e.g. "17.0.21.1").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Jdk {
    pub home: PathBuf,
    pub version: String,
}

impl Jdk {
    /// The feature release: 17 for "17.0.21.1" (and 8 for "1.8.0_402").
    pub fn feature(&self) -> u32 {
        let mut parts = self.version.split(|c: char| !c.is_ascii_digit());
        let first: u32 = parts.next().and_then(|s| s.parse().ok()).unwrap_or(0);
        if first == 1 {
            parts.next().and_then(|s| s.parse().ok()).unwrap_or(0)
        } else {
            first
        }
    }

    /// `bin/TOOL` of this JDK, or of [`Jdk::tools`] for the development tools a runtime image lacks.
    pub fn bin(&self, tool: &str) -> PathBuf {
        let own = self.home.join("bin").join(tool);
        if own.is_file() {
            own
        } else {
            self.tools().home.join("bin").join(tool)
        }
    }

    /// Whether this JDK is a runtime image without `javac` (scripts/install-java25.sh installs one).
    pub fn is_runtime_only(&self) -> bool {
        !self.home.join("bin/javac").is_file()
    }

    /// The JDK whose `javac`, `jar`, `javap` and `jimage` serve this one: itself; for a runtime image, the
    /// newest full JDK of a release not after it (what its javac compiles must load here), else the
    /// oldest. Sources that need a later release than this JDK's compiler are left out by their
    /// `// @requires-jdk N` line ([`required_jdk`]), checked against `tools().feature()`.
    pub fn tools(&self) -> Jdk {
        if !self.is_runtime_only() {
            return self.clone();
        }
        let full: Vec<Jdk> = installed_jdks()
            .into_iter()
            .filter(|j| !j.is_runtime_only())
            .collect();
        full.iter()
            .rev()
            .find(|j| j.feature() <= self.feature())
            .or(full.first())
            .cloned()
            .unwrap_or_else(|| self.clone())
    }

    /// A short name for logs and directory names, unique among `jdks()`.
    pub fn key(&self) -> String {
        let dup = jdks().iter().filter(|j| j.version == self.version).count() > 1;
        if dup {
            format!(
                "{}-{}",
                self.version,
                self.home
                    .file_name()
                    .and_then(OsStr::to_str)
                    .unwrap_or("jdk")
            )
        } else {
            self.version.clone()
        }
    }
}

fn read_version(home: &Path) -> Option<String> {
    if let Ok(release) = fs::read_to_string(home.join("release")) {
        for line in release.lines() {
            if let Some(v) = line.strip_prefix("JAVA_VERSION=") {
                return Some(v.trim().trim_matches('"').to_string());
            }
        }
    }
    // No release file: `javac -version` prints "javac 17.0.2" (to stdout on 9+, stderr on 8).
    let out = Command::new(home.join("bin/javac"))
        .arg("-version")
        .output()
        .ok()?;
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    all.split_whitespace().nth(1).map(str::to_string)
}

/// Every JDK under /usr/lib/jvm (a directory with bin/java, and bin/javac or a `release` file: a runtime
/// image counts, see [`Jdk::bin`]), symlinked duplicates removed, oldest first.
/// `INSTR_TEST_JDKS` (a comma-separated list of feature releases, e.g. "17" or "17,25") narrows the list.
pub fn jdks() -> Vec<Jdk> {
    let only: Option<Vec<u32>> = std::env::var("INSTR_TEST_JDKS")
        .ok()
        .map(|s| s.split(',').filter_map(|v| v.trim().parse().ok()).collect());
    installed_jdks()
        .into_iter()
        .filter(|j| only.as_ref().is_none_or(|o| o.contains(&j.feature())))
        .collect()
}

/// Every JDK under /usr/lib/jvm, whatever `INSTR_TEST_JDKS` says: where [`Jdk::tools`] looks.
fn installed_jdks() -> Vec<Jdk> {
    static JDKS: OnceLock<Vec<Jdk>> = OnceLock::new();
    JDKS.get_or_init(|| {
        let mut found: BTreeMap<PathBuf, Jdk> = BTreeMap::new();
        if let Ok(entries) = fs::read_dir("/usr/lib/jvm") {
            for e in entries.flatten() {
                let Ok(home) = fs::canonicalize(e.path()) else {
                    continue;
                };
                let described = home.join("bin/javac").is_file() || home.join("release").is_file();
                if !described || !home.join("bin/java").is_file() || found.contains_key(&home) {
                    continue;
                }
                if let Some(version) = read_version(&home) {
                    found.insert(home.clone(), Jdk { home, version });
                }
            }
        }
        let mut list: Vec<Jdk> = found.into_values().collect();
        list.sort_by(|a, b| {
            (a.feature(), &a.version, &a.home).cmp(&(b.feature(), &b.version, &b.home))
        });
        list
    })
    .clone()
}

/// Results computed once per key (a JDK) in this process.
pub type PerKey = OnceLock<Mutex<HashMap<String, Arc<OnceLock<PathBuf>>>>>;

/// Runs `f` at most once per `key` in this process; concurrent callers for the same key wait for the first.
pub fn once_per_key(table: &'static PerKey, key: &str, f: impl FnOnce() -> PathBuf) -> PathBuf {
    let cell = {
        let mut map = table
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        map.entry(key.to_string()).or_default().clone()
    };
    cell.get_or_init(f).clone()
}

/// The programs of `test-classes/SUBDIR` compiled with `jdk` into target/SUBDIR-programs-<version>/, once
/// per test binary and JDK.
pub fn compiled_test_classes(jdk: &Jdk, subdir: &str) -> PathBuf {
    static DONE: PerKey = OnceLock::new();
    once_per_key(&DONE, &format!("{subdir}-{}", jdk.key()), || {
        let out = target_dir().join(format!("{subdir}-programs-{}", jdk.key()));
        let _ = fs::remove_dir_all(&out);
        javac(
            jdk,
            &java_files(&workspace().join("test-classes").join(subdir)),
            &out,
            &[],
        );
        out
    })
}

/// `jimage extract` of the JDK's runtime image into target/jdk-corpus/<version>/ (DIR/<module>/<pkg>/X.class).
/// Cached across runs: a `.done` stamp marks a complete extraction, which is made in a temporary directory and
/// renamed into place, so an interrupted run leaves nothing that looks complete.
pub fn extract_jdk_image(jdk: &Jdk) -> PathBuf {
    static DONE: PerKey = OnceLock::new();
    once_per_key(&DONE, &jdk.key(), || {
        let root = target_dir().join("jdk-corpus");
        let dir = root.join(jdk.key());
        if dir.join(".done").is_file() {
            return dir;
        }
        fs::create_dir_all(&root).unwrap();
        let tmp = root.join(format!(".{}.tmp-{}", jdk.key(), std::process::id()));
        if tmp.exists() {
            fs::remove_dir_all(&tmp).unwrap();
        }
        let modules = jdk.home.join("lib/modules");
        let out = run(Command::new(jdk.bin("jimage"))
            .arg("extract")
            .arg("--dir")
            .arg(&tmp)
            .arg(&modules));
        check(&format!("jimage extract {}", modules.display()), &out);
        fs::write(tmp.join(".done"), format!("{}\n", jdk.home.display())).unwrap();
        if dir.exists() {
            fs::remove_dir_all(&dir).unwrap(); // an incomplete leftover (no stamp)
        }
        if let Err(e) = fs::rename(&tmp, &dir) {
            // another process may have finished the same extraction first
            let _ = fs::remove_dir_all(&tmp);
            assert!(
                dir.join(".done").is_file(),
                "renaming {} to {}: {e}",
                tmp.display(),
                dir.display()
            );
        }
        dir
    })
}

/// Module directories of an extracted image (names of the subdirectories), sorted.
pub fn image_modules(image: &Path) -> Vec<String> {
    let mut mods: Vec<String> = fs::read_dir(image)
        .unwrap_or_else(|e| panic!("{}: {e}", image.display()))
        .flatten()
        .filter(|e| e.path().is_dir())
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .collect();
    mods.sort();
    mods
}

/// Runs `javac -d OUT_DIR EXTRA... SRCS...` with `jdk`, panicking with its diagnostics on failure.
pub fn javac(jdk: &Jdk, srcs: &[PathBuf], out_dir: &Path, extra_args: &[&str]) {
    fs::create_dir_all(out_dir).unwrap();
    let out = run(Command::new(jdk.bin("javac"))
        .arg("-encoding")
        .arg("UTF-8")
        .arg("-d")
        .arg(out_dir)
        .args(extra_args)
        .args(srcs));
    check(&format!("javac ({}) {:?}", jdk.version, srcs), &out);
}

/// Runs `java ARGS...` with `jdk`.
pub fn java<S: AsRef<OsStr>>(jdk: &Jdk, args: &[S]) -> Output {
    run(Command::new(jdk.bin("java")).args(args))
}

/// The JVM options every verification run uses: verify every class, boot classes included.
pub const VERIFY_FLAGS: &[&str] = &[
    "-Xverify:all",
    "-XX:+UnlockDiagnosticVMOptions",
    "-XX:+BytecodeVerificationLocal",
    "-XX:+BytecodeVerificationRemote",
    "-Xss4m",
];

/// Compiles tests/harness/*.java with `jdk` into target/harness-<version>/ (once per test binary).
pub fn compile_harness(jdk: &Jdk) -> PathBuf {
    static DONE: PerKey = OnceLock::new();
    once_per_key(&DONE, &jdk.key(), || {
        let out = target_dir().join(format!("harness-{}", jdk.key()));
        if out.exists() {
            fs::remove_dir_all(&out).unwrap();
        }
        let srcs = java_files(&workspace().join("tests/harness"));
        javac(jdk, &srcs, &out, &["-Xlint:all", "-Werror"]);
        out
    })
}

/// The .java files directly in `dir`, sorted.
pub fn java_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension() == Some(OsStr::new("java")))
        .collect();
    v.sort();
    v
}

/// The JDK feature release a test-classes source needs, from a `// @requires-jdk N` line at its top.
pub fn required_jdk(src: &Path) -> u32 {
    let text = fs::read_to_string(src).unwrap_or_default();
    text.lines()
        .take(5)
        .find_map(|l| {
            l.trim()
                .strip_prefix("// @requires-jdk")
                .and_then(|v| v.trim().parse().ok())
        })
        .unwrap_or(0)
}

// ---------------------------------------------------------------------------------------------------------------
// the verifier harness

/// What one ForceLink run said: the status of every class (run with -v), the SUMMARY line, and the raw output.
#[derive(Debug)]
pub struct LinkReport {
    /// class name -> (OK | VERIFY | FORMAT | LINKAGE | MISSING | SKIP, detail)
    pub classes: BTreeMap<String, (String, String)>,
    pub summary: Option<String>,
    pub exit: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl LinkReport {
    fn parse(out: Output) -> LinkReport {
        let stdout = text(&out.stdout);
        let mut classes = BTreeMap::new();
        let mut summary = None;
        for line in stdout.lines() {
            if line.starts_with("SUMMARY ") {
                summary = Some(line.to_string());
                continue;
            }
            let mut parts = line.splitn(3, ' ');
            let (Some(kind), Some(name)) = (parts.next(), parts.next()) else {
                continue;
            };
            if ["OK", "VERIFY", "FORMAT", "LINKAGE", "MISSING", "SKIP"].contains(&kind) {
                classes.insert(
                    name.to_string(),
                    (kind.to_string(), parts.next().unwrap_or("").to_string()),
                );
            }
        }
        LinkReport {
            classes,
            summary,
            exit: out.status.code(),
            stdout,
            stderr: text(&out.stderr),
        }
    }

    pub fn count(&self, kind: &str) -> usize {
        self.classes.values().filter(|(k, _)| k == kind).count()
    }

    pub fn status(&self, class: &str) -> Option<&str> {
        self.classes.get(class).map(|(k, _)| k.as_str())
    }

    /// Panics (with the run's output) unless the harness ran to its SUMMARY line.
    pub fn assert_completed(&self, what: &str) {
        if self.summary.is_none() {
            panic!(
                "{what}: the harness did not finish (exit {:?})\n--- stdout (tail)\n{}\n--- stderr (tail)\n{}",
                self.exit,
                tail(&self.stdout, 40),
                tail(&self.stderr, 40)
            );
        }
    }

    /// Classes that were OK in `self` (the original) but are not OK, or are absent, in `after`, with their new status.
    pub fn regressions(&self, after: &LinkReport) -> Vec<String> {
        self.classes
            .iter()
            .filter(|(_, (k, _))| k == "OK")
            .filter_map(|(name, _)| match after.classes.get(name) {
                Some((k, _)) if k == "OK" => None,
                Some((k, d)) => Some(format!("{k} {name} {d}")),
                None => Some(format!("ABSENT {name} (no status after rewriting)")),
            })
            .collect()
    }

    /// One line per status kind that is not OK, for the log: "MISSING 3: a.B, c.D, ...".
    pub fn not_ok_digest(&self) -> Vec<String> {
        let mut by_kind: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for (name, (k, _)) in &self.classes {
            if k != "OK" {
                by_kind.entry(k).or_default().push(name);
            }
        }
        by_kind
            .into_iter()
            .map(|(k, names)| {
                let shown: Vec<&str> = names.iter().take(8).copied().collect();
                let more = if names.len() > 8 {
                    format!(", ... ({} more)", names.len() - 8)
                } else {
                    String::new()
                };
                format!("{k} {}: {}{more}", names.len(), shown.join(", "))
            })
            .collect()
    }
}

pub fn tail(s: &str, lines: usize) -> String {
    let v: Vec<&str> = s.lines().collect();
    v[v.len().saturating_sub(lines)..].join("\n")
}

/// ForceLink in loader mode (child-first class loader) over `dirs`, every class reported (-v).
pub fn force_link(jdk: &Jdk, dirs: &[&Path]) -> LinkReport {
    let harness = compile_harness(jdk);
    let mut cmd = Command::new(jdk.bin("java"));
    cmd.args(VERIFY_FLAGS)
        .arg("-cp")
        .arg(&harness)
        .arg("ForceLink")
        .arg("-v")
        .args(dirs);
    LinkReport::parse(run(&mut cmd))
}

/// ForceLink in --boot mode over a JDK-layout directory: every module directory in it is patched into the VM
/// (`--patch-module M=DIR/M --add-reads M=ALL-UNNAMED`, `--add-modules ALL-SYSTEM`), so the classes the VM loads,
/// java.base's included, are the ones in `image`. One JVM for the whole directory.
pub fn force_link_boot(jdk: &Jdk, image: &Path) -> LinkReport {
    let harness = compile_harness(jdk);
    // An argument file keeps the command line short and shows up in failures for a manual rerun.
    let mut argfile = String::new();
    for flag in VERIFY_FLAGS {
        argfile.push_str(flag);
        argfile.push('\n');
    }
    for m in image_modules(image) {
        let dir = image.join(&m);
        argfile.push_str(&format!(
            "--patch-module\n{m}={}\n--add-reads\n{m}=ALL-UNNAMED\n",
            quote(&dir)
        ));
    }
    argfile.push_str(&format!(
        "--add-modules\nALL-SYSTEM\n-cp\n{}\nForceLink\n-v\n--boot\n{}\n",
        quote(&harness),
        quote(image)
    ));
    let file = PathBuf::from(format!("{}.forcelink-args", image.display()));
    fs::write(&file, argfile).unwrap();
    let out = run(Command::new(jdk.bin("java")).arg(format!("@{}", file.display())));
    LinkReport::parse(out)
}

/// Quotes a path for a java @argfile.
fn quote(p: &Path) -> String {
    format!(
        "\"{}\"",
        p.display()
            .to_string()
            .replace('\\', "\\\\")
            .replace('"', "\\\"")
    )
}

// ---------------------------------------------------------------------------------------------------------------
// test-classes

/// A compiled copy of test-classes for one JDK.
#[derive(Debug, Clone)]
pub struct EdgeClasses {
    /// Every class compiled from test-classes/edge (except the code-limit class) plus OldClassGen's output.
    pub dir: PathBuf,
    /// CodeLimit.class alone: rewriting it may legitimately fail, so it is kept apart.
    pub limit_dir: PathBuf,
    /// Names of the classes with a main, in the order to run them.
    pub mains: Vec<String>,
    /// Sources skipped on this JDK, with the reason.
    pub skipped: Vec<String>,
}

/// The source file compiled apart (see `EdgeClasses::limit_dir`).
pub const LIMIT_CLASS: &str = "CodeLimit";

/// Compiles test-classes/edge/*.java and runs test-classes/gen/OldClassGen with `jdk` (once per test binary).
pub fn compile_edge_classes(jdk: &Jdk) -> EdgeClasses {
    static DONE: PerKey = OnceLock::new();
    let root = target_dir().join(format!("edge-classes-{}", jdk.key()));
    let (dir, limit_dir, gen_dir) = (root.join("classes"), root.join("limit"), root.join("gen"));
    let mut mains = Vec::new();
    let mut skipped = Vec::new();
    let mut srcs = Vec::new();
    let mut limit_src = None;
    for src in java_files(&workspace().join("test-classes/edge")) {
        let name = src.file_stem().unwrap().to_string_lossy().into_owned();
        let need = required_jdk(&src);
        if need > jdk.tools().feature() {
            skipped.push(format!(
                "{name}.java needs JDK {need}+, this is {} (compiled by {})",
                jdk.version,
                jdk.tools().version
            ));
            continue;
        }
        if name == LIMIT_CLASS {
            limit_src = Some(src);
            continue;
        }
        mains.push(name);
        srcs.push(src);
    }
    mains.push("OldJsr".into());
    mains.push("CondyConst".into());
    once_per_key(&DONE, &jdk.key(), || {
        if root.exists() {
            fs::remove_dir_all(&root).unwrap();
        }
        javac(jdk, &srcs, &dir, &[]);
        if let Some(src) = &limit_src {
            javac(jdk, std::slice::from_ref(src), &limit_dir, &[]);
        }
        javac(
            jdk,
            &[workspace().join("test-classes/gen/OldClassGen.java")],
            &gen_dir,
            &[],
        );
        let out = java(
            jdk,
            &[
                OsStr::new("-cp"),
                gen_dir.as_os_str(),
                OsStr::new("OldClassGen"),
                dir.as_os_str(),
            ],
        );
        check("OldClassGen", &out);
        root.clone()
    });
    EdgeClasses {
        dir,
        limit_dir,
        mains,
        skipped,
    }
}

/// Runs `java -Xverify:all -cp CLASSPATH MAIN` and returns (exit code, stdout, stderr).
pub fn run_main(jdk: &Jdk, classpath: &Path, main: &str) -> (Option<i32>, String, String) {
    let mut cmd = Command::new(jdk.bin("java"));
    cmd.arg("-Xverify:all").arg("-cp").arg(classpath).arg(main);
    let out = run(&mut cmd);
    (out.status.code(), text(&out.stdout), text(&out.stderr))
}

/// All files under `dir`, relative, sorted.
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    fn walk(base: &Path, dir: &Path, out: &mut Vec<PathBuf>) {
        for e in fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .flatten()
        {
            let p = e.path();
            if p.is_dir() {
                walk(base, &p, out);
            } else {
                out.push(p.strip_prefix(base).unwrap().to_path_buf());
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

/// A VM started with agent `options` refused to start, printing exactly one `instr:` line that contains
/// `expect`, and did not crash.
pub fn assert_refused(out: &Output, options: &str, expect: &str) {
    let stderr = text(&out.stderr);
    assert!(!out.status.success(), "VM started with {options}");
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("instr: "))
        .collect();
    assert_eq!(
        lines.len(),
        1,
        "expected one instr: line for {options}:\n{stderr}"
    );
    assert!(
        lines[0].contains(expect),
        "{options}: {:?} does not mention {expect:?}",
        lines[0]
    );
    assert!(
        !stderr.contains("SIGSEGV") && !stderr.contains("hs_err"),
        "{options}: the VM crashed:\n{stderr}"
    );
}

/// Every JDK found, failing when there is none: the tests that must run on real class files.
pub fn all_jdks() -> Vec<Jdk> {
    let jdks = jdks();
    assert!(
        !jdks.is_empty(),
        "no JDK (a directory with bin/java) under /usr/lib/jvm"
    );
    jdks
}

/// An agent's `PREFIX.json` as the tests read it: parsed, and its stacks (`sites[].stack`, indexes into
/// the `frames` table since `instr-profile/2`) replaced by their frames, and call paths'
/// (`calls.paths[].frames`) by their `Class.method` names, so that a test names a frame by its fields.
/// Every index must be in the table.
pub fn profile_json(text: &str) -> serde_json::Value {
    use serde_json::Value;
    let mut v: Value = serde_json::from_str(text).expect("valid JSON");
    assert_eq!(v["schema"], "instr-profile/2", "the profile's schema");
    let frames = v["frames"].as_array().cloned().unwrap_or_default();
    let frame = |i: &Value| -> Value {
        let i = i.as_u64().expect("a frame index") as usize;
        frames
            .get(i)
            .cloned()
            .unwrap_or_else(|| panic!("frame {i} is not in the table of {}", frames.len()))
    };
    if let Some(Value::Array(sites)) = v.get_mut("sites") {
        for s in sites {
            if let Some(Value::Array(stack)) = s.get_mut("stack") {
                for f in stack.iter_mut() {
                    *f = frame(f);
                }
            }
        }
    }
    if let Some(Value::Array(paths)) = v.pointer_mut("/calls/paths") {
        for p in paths {
            if let Some(Value::Array(names)) = p.get_mut("frames") {
                for f in names.iter_mut() {
                    let fr = frame(f);
                    let (class, method) = (
                        fr["class"].as_str().unwrap(),
                        fr["method"].as_str().unwrap(),
                    );
                    *f = Value::from(if class.is_empty() {
                        method.to_string()
                    } else {
                        format!("{class}.{method}")
                    });
                }
            }
        }
    }
    v
}

/// What process `pgid` and the processes of its group were doing when a test gave up on them as hung: each thread's name,
/// state and kernel wait channel from /proc, and the native stacks from gdb when it is installed. A hang
/// seen once on a loaded CI machine is otherwise gone before anyone can look at it.
pub fn hang_report(pgid: u32) -> String {
    let mut report = String::new();
    let Ok(procs) = fs::read_dir("/proc") else {
        return report;
    };
    for proc_dir in procs.flatten() {
        let Ok(pid) = proc_dir.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let stat = fs::read_to_string(proc_dir.path().join("stat")).unwrap_or_default();
        // Fields after the parenthesised name: state, ppid, pgrp.
        let after_name = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
        if pid != pgid && after_name.split_whitespace().nth(2) != Some(&pgid.to_string()) {
            continue;
        }
        let cmdline = fs::read_to_string(proc_dir.path().join("cmdline")).unwrap_or_default();
        report += &format!("process {pid}: {}\n", cmdline.replace('\0', " ").trim());
        let tasks = fs::read_dir(proc_dir.path().join("task"))
            .into_iter()
            .flatten()
            .flatten();
        for task in tasks {
            let read = |f: &str| fs::read_to_string(task.path().join(f)).unwrap_or_default();
            let stat = read("stat");
            let state = stat
                .rsplit_once(')')
                .and_then(|(_, r)| r.split_whitespace().next());
            report += &format!(
                "  {:>7} {:<16} {} {}\n",
                task.file_name().to_string_lossy(),
                read("comm").trim(),
                state.unwrap_or("?"),
                read("wchan")
            );
        }
        let gdb = Command::new("timeout")
            .args([
                "60",
                "gdb",
                "-p",
                &pid.to_string(),
                "-batch",
                "-ex",
                "thread apply all bt 30",
            ])
            .output();
        if let Some(out) = gdb.ok().filter(|o| o.status.success()) {
            let frames = text(&out.stdout);
            report += &frames
                .lines()
                .filter(|l| l.starts_with("Thread ") || l.starts_with('#'))
                .collect::<Vec<_>>()
                .join("\n");
            report.push('\n');
        }
    }
    report
}
