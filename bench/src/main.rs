//! `rewriter-bench`: throughput of instr's class-file rewriter against ASM and the JDK ClassFile API.
//!
//! ```text
//! cargo run --release -p instr-bench --bin rewriter-bench [-- --corpus DIR] [--passes N] [--java-warmup N]
//!                                                           [--java-heap SIZE] [--no-java]
//! ```
//!
//! See `bench/README.md` for the methodology. This is a benchmark, not a test: it prints figures and a PASS/FAIL
//! line for the performance target, and exits 0 whatever the figures are (non-zero only for bad usage or when no
//! corpus can be found).

use std::cell::{Cell, RefCell};
use std::fmt::Debug;
use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::Instant;

use instr_rewriter::probes::selection::Everything;
use instr_rewriter::probes::{Flavour, IdRegistry, Instrumenter};

const USAGE: &str = "\
usage: rewriter-bench [--corpus DIR] [--passes N] [--java-warmup N] [--java-heap SIZE] [--no-java]
  --corpus DIR       class files to rewrite (every *.class below DIR); default: the JDK 17 runtime image,
                     extracted once into target/bench-corpus/jdk-<version>/
  --passes N         timed passes per tool and mode, best one reported (default 3)
  --java-warmup N    untimed warm-up passes in each JVM (default 3; the Rust side does 1)
  --java-heap SIZE   -Xms/-Xmx of the Java benchmarks (default: 3g, more for big corpora)
  --no-java          only measure instr";

/// Where ASM comes from (Debian's libasm-java; /work/shared/workloads/install.sh installs it).
const ASM_JAR: &str = "/usr/share/java/asm.jar";
/// asm-commons (same package), for `AdviceAdapter` in the `probes-advice` mode.
const ASM_COMMONS_JAR: &str = "/usr/share/java/asm-commons.jar";
const JVM_ROOT: &str = "/usr/lib/jvm";
/// Performance targets of the project: instr read+edit+write (`nop`) and instr with every probe on (`probes`)
/// at least this many times ASM's classes/s doing the same.
const TARGET_VS_ASM: f64 = 3.0;

struct Options {
    corpus: Option<PathBuf>,
    passes: usize,
    java_warmup: usize,
    java_heap: Option<String>,
    java: bool,
}

fn parse_args() -> Result<Options, String> {
    let mut opts = Options {
        corpus: None,
        passes: 3,
        java_warmup: 3,
        java_heap: None,
        java: true,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or_else(|| format!("{name} needs a value"));
        match arg.as_str() {
            "--corpus" => opts.corpus = Some(PathBuf::from(value("--corpus")?)),
            "--passes" => opts.passes = parse_count(&value("--passes")?, 1)?,
            "--java-warmup" => opts.java_warmup = parse_count(&value("--java-warmup")?, 0)?,
            "--java-heap" => opts.java_heap = Some(value("--java-heap")?),
            "--no-java" => opts.java = false,
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(opts)
}

fn parse_count(s: &str, min: usize) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if n >= min => Ok(n),
        _ => Err(format!("expected a number >= {min}, got {s:?}")),
    }
}

// ---------------------------------------------------------------------------------------------------------------
// JDK discovery and corpus

#[derive(Clone, Debug)]
struct Jdk {
    home: PathBuf,
    /// `JAVA_VERSION` of the `release` file, e.g. "17.0.21.1".
    version: String,
    /// Feature release: 17, 25, ... ("1.8.0" counts as 8).
    feature: u32,
}

impl Jdk {
    fn bin(&self, tool: &str) -> PathBuf {
        self.home.join("bin").join(tool)
    }
}

/// JDKs under /usr/lib/jvm: directories with bin/javac, bin/java and lib/modules (symlinks resolved, duplicates
/// removed), sorted oldest first.
fn discover_jdks() -> Vec<Jdk> {
    let mut jdks: Vec<Jdk> = Vec::new();
    let Ok(entries) = fs::read_dir(JVM_ROOT) else {
        return jdks;
    };
    for entry in entries.flatten() {
        let Ok(home) = fs::canonicalize(entry.path()) else {
            continue;
        };
        if jdks.iter().any(|j| j.home == home) {
            continue;
        }
        let complete = ["bin/javac", "bin/java", "bin/jimage", "lib/modules"]
            .iter()
            .all(|f| home.join(f).is_file());
        if !complete {
            continue;
        }
        let Some(version) = release_version(&home) else {
            continue;
        };
        let Some(feature) = feature_of(&version) else {
            continue;
        };
        jdks.push(Jdk {
            home,
            version,
            feature,
        });
    }
    jdks.sort_by(|a, b| {
        version_key(&a.version)
            .cmp(&version_key(&b.version))
            .then(a.home.cmp(&b.home))
    });
    jdks
}

fn release_version(home: &Path) -> Option<String> {
    let text = fs::read_to_string(home.join("release")).ok()?;
    text.lines().find_map(|line| {
        let v = line.strip_prefix("JAVA_VERSION=")?;
        Some(v.trim().trim_matches('"').to_string())
    })
}

fn feature_of(version: &str) -> Option<u32> {
    let key = version_key(version);
    match key.as_slice() {
        [1, minor, ..] => Some(*minor),
        [major, ..] => Some(*major),
        [] => None,
    }
}

fn version_key(version: &str) -> Vec<u32> {
    version
        .split(['.', '_', '+', '-'])
        .map_while(|p| p.parse().ok())
        .collect()
}

/// The default corpus: the newest JDK 17's runtime image, extracted once with `jimage extract` into
/// `<target>/bench-corpus/jdk-<version>/` (via a temporary directory renamed into place).
fn default_corpus(jdks: &[Jdk], target: &Path) -> Result<PathBuf, String> {
    let jdk = jdks.iter().rev().find(|j| j.feature == 17).ok_or_else(|| {
        format!("no JDK 17 (bin/javac + lib/modules) under {JVM_ROOT}; pass --corpus DIR")
    })?;
    let cache_root = target.join("bench-corpus");
    let dir = cache_root.join(format!("jdk-{}", jdk.version));
    if dir.is_dir() {
        return Ok(dir);
    }
    fs::create_dir_all(&cache_root)
        .map_err(|e| format!("creating {}: {e}", cache_root.display()))?;
    let tmp = cache_root.join(format!(".jdk-{}.tmp-{}", jdk.version, std::process::id()));
    let _ = fs::remove_dir_all(&tmp);
    println!(
        "extracting the runtime image of {} into {} ...",
        jdk.home.display(),
        dir.display()
    );
    let status = Command::new(jdk.bin("jimage"))
        .arg("extract")
        .arg("--dir")
        .arg(&tmp)
        .arg(jdk.home.join("lib/modules"))
        .status()
        .map_err(|e| format!("running jimage: {e}"))?;
    if !status.success() {
        let _ = fs::remove_dir_all(&tmp);
        return Err(format!("jimage extract failed: {status}"));
    }
    if let Err(e) = fs::rename(&tmp, &dir) {
        let _ = fs::remove_dir_all(&tmp);
        // Another run may have won the race; its copy is as good as ours.
        if !dir.is_dir() {
            return Err(format!(
                "renaming {} to {}: {e}",
                tmp.display(),
                dir.display()
            ));
        }
    }
    Ok(dir)
}

struct Corpus {
    /// Relative paths, sorted (the same order the Java programs use).
    names: Vec<String>,
    classes: Vec<Vec<u8>>,
    bytes: u64,
}

/// Every regular `*.class` file below `root` (module-info included, nothing excluded), read into memory.
fn load_corpus(root: &Path) -> Result<Corpus, String> {
    let mut paths = Vec::new();
    collect_class_files(root, &mut paths)?;
    paths.sort();
    let mut corpus = Corpus {
        names: Vec::with_capacity(paths.len()),
        classes: Vec::with_capacity(paths.len()),
        bytes: 0,
    };
    for path in paths {
        let bytes = fs::read(&path).map_err(|e| format!("reading {}: {e}", path.display()))?;
        corpus.bytes += bytes.len() as u64;
        corpus.classes.push(bytes);
        corpus.names.push(
            path.strip_prefix(root)
                .unwrap_or(&path)
                .display()
                .to_string(),
        );
    }
    Ok(corpus)
}

fn collect_class_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), String> {
    let entries = fs::read_dir(dir).map_err(|e| format!("listing {}: {e}", dir.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("listing {}: {e}", dir.display()))?;
        let path = entry.path();
        // metadata() follows symlinks, like Java's Files.isRegularFile; directories are walked without following
        // symlinks (Files.walk's default).
        let file_type = entry
            .file_type()
            .map_err(|e| format!("{}: {e}", path.display()))?;
        if file_type.is_dir() {
            collect_class_files(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "class")
            && fs::metadata(&path).is_ok_and(|m| m.is_file())
        {
            out.push(path);
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------------------------
// Measurements

/// One row of the result table.
#[derive(Clone, Debug)]
struct Measurement {
    tool: String,
    mode: String,
    classes: u64,
    errors: u64,
    seconds: f64,
    mb: f64,
    out_mb: f64,
    note: String,
}

impl Measurement {
    fn classes_per_s(&self) -> f64 {
        self.classes as f64 / self.seconds
    }
    fn mb_per_s(&self) -> f64 {
        self.mb / self.seconds
    }
}

/// One pass of `f` over the whole corpus: (output bytes, errors). The first errors go to `first_errors`.
fn rust_pass<E: Debug>(
    corpus: &Corpus,
    f: impl Fn(&[u8]) -> Result<Vec<u8>, E>,
    mut first_errors: Option<&mut Vec<String>>,
) -> (u64, u64) {
    let (mut out, mut errors) = (0u64, 0u64);
    for (i, class) in corpus.classes.iter().enumerate() {
        match f(std::hint::black_box(class)) {
            Ok(bytes) => out += std::hint::black_box(bytes).len() as u64,
            Err(e) => {
                errors += 1;
                if let Some(list) = first_errors.as_deref_mut() {
                    if list.len() < 5 {
                        list.push(format!("{}: {e:?}", corpus.names[i]));
                    }
                }
            }
        }
    }
    (out, errors)
}

/// instr's figures for one mode: one warm-up pass (which also collects the first errors), best of `passes`.
/// `pass` runs one pass over the corpus and returns (output bytes, errors).
fn measure_rust(
    corpus: &Corpus,
    mode: &str,
    passes: usize,
    pass: impl Fn(Option<&mut Vec<String>>) -> (u64, u64),
) -> Measurement {
    let mut first_errors = Vec::new();
    let t0 = Instant::now();
    let (mut out, mut errors) = pass(Some(&mut first_errors));
    println!(
        "  instr {mode}: warm-up pass: {:.3} s",
        t0.elapsed().as_secs_f64()
    );
    let mut best = f64::INFINITY;
    for n in 1..=passes {
        let t0 = Instant::now();
        (out, errors) = pass(None);
        let secs = t0.elapsed().as_secs_f64();
        println!("  instr {mode}: timed pass {n}: {secs:.3} s");
        best = best.min(secs);
    }
    for e in &first_errors {
        println!("  instr {mode}: ERROR {e}");
    }
    Measurement {
        tool: "instr".into(),
        mode: mode.into(),
        classes: corpus.classes.len() as u64,
        errors,
        seconds: best,
        mb: corpus.bytes as f64 / 1e6,
        out_mb: out as f64 / 1e6,
        note: String::new(),
    }
}

/// instr's `probes` mode: `rewrite` with the agent's `Instrumenter`, every probe on every method (`Everything`),
/// native flavour, one `IdRegistry` per pass (created inside the timed part). Methods the rewriter leaves
/// unedited (warnings, e.g. the 64 KB limit) are counted in the note.
fn measure_probes(corpus: &Corpus, passes: usize) -> Measurement {
    let warnings = Cell::new(0u64);
    let first_warnings = RefCell::new(Vec::new());
    let ids_seen = Cell::new((0usize, 0usize));
    let pass = |errs: Option<&mut Vec<String>>| {
        warnings.set(0);
        let ids = IdRegistry::new();
        let edit = Instrumenter {
            selection: &Everything,
            ids: &ids,
            flavour: Flavour::Native,
            calls: Default::default(),
        };
        let result = rust_pass(
            corpus,
            |bytes| {
                let r = instr_rewriter::rewrite(bytes, &edit, instr_rewriter::Options::default())?;
                if !r.warnings.is_empty() {
                    warnings.set(warnings.get() + r.warnings.len() as u64);
                    let mut first = first_warnings.borrow_mut();
                    for w in r.warnings {
                        if first.len() < 5 {
                            first.push(w);
                        }
                    }
                }
                Ok::<_, instr_rewriter::Error>(r.bytes.unwrap_or_else(|| bytes.to_vec()))
            },
            errs,
        );
        ids_seen.set((ids.method_count(), ids.site_count()));
        result
    };
    let mut m = measure_rust(corpus, "probes", passes, pass);
    for w in first_warnings.borrow().iter() {
        println!("  instr probes: WARNING {w}");
    }
    let (methods, sites) = ids_seen.get();
    m.note = format!("method ids {methods}, site ids {sites}");
    if warnings.get() > 0 {
        m.note += &format!(", {} methods left unedited (warnings)", warnings.get());
    }
    m
}

/// Compiles `source` with `jdk`'s javac into `out_dir`.
fn javac(jdk: &Jdk, classpath: Option<&str>, source: &Path, out_dir: &Path) -> Result<(), String> {
    fs::create_dir_all(out_dir).map_err(|e| format!("creating {}: {e}", out_dir.display()))?;
    let mut cmd = Command::new(jdk.bin("javac"));
    cmd.args(["-nowarn", "-encoding", "UTF-8", "-d"])
        .arg(out_dir);
    if let Some(cp) = classpath {
        cmd.arg("-cp").arg(cp);
    }
    let status = cmd
        .arg(source)
        .status()
        .map_err(|e| format!("running javac: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("javac {} failed: {status}", source.display()))
    }
}

/// Runs one Java benchmark JVM, echoing its progress, and parses its `RESULT` line.
fn run_java(
    jdk: &Jdk,
    heap: &str,
    classpath: &str,
    main: &str,
    args: &[String],
) -> Result<Measurement, String> {
    let mut child = Command::new(jdk.bin("java"))
        .arg(format!("-Xms{heap}"))
        .arg(format!("-Xmx{heap}"))
        // Touch the whole heap up front: otherwise page faults on freshly grown eden regions add up to ~1 s to
        // random passes on this kind of VM.
        .arg("-XX:+AlwaysPreTouch")
        .arg("-cp")
        .arg(classpath)
        .arg(main)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("starting {}: {e}", jdk.bin("java").display()))?;
    let mut result = None;
    let stdout = child.stdout.take().expect("piped stdout");
    for line in BufReader::new(stdout).lines() {
        let line = line.map_err(|e| format!("reading {main}'s output: {e}"))?;
        println!("  {line}");
        if let Some(rest) = line.strip_prefix("RESULT ") {
            result = Some(parse_result(rest)?);
        }
    }
    let status = child
        .wait()
        .map_err(|e| format!("waiting for {main}: {e}"))?;
    if !status.success() {
        return Err(format!("{main} {} exited with {status}", args.join(" ")));
    }
    result.ok_or_else(|| format!("{main} printed no RESULT line"))
}

/// Parses `tool=asm mode=nop classes=N errors=E seconds=S mb=M out_mb=O [stackmaps=...]
/// [method_ids=I site_ids=J]`.
fn parse_result(line: &str) -> Result<Measurement, String> {
    let field = |key: &str| {
        line.split_whitespace()
            .find_map(|kv| kv.strip_prefix(key).and_then(|rest| rest.strip_prefix('=')))
            .ok_or_else(|| format!("RESULT line without {key}=: {line}"))
    };
    let number = |key: &str| -> Result<f64, String> {
        field(key)?
            .parse::<f64>()
            .map_err(|e| format!("RESULT {key}: {e}: {line}"))
    };
    Ok(Measurement {
        tool: field("tool")?.to_string(),
        mode: field("mode")?.to_string(),
        classes: number("classes")? as u64,
        errors: number("errors")? as u64,
        seconds: number("seconds")?,
        mb: number("mb")?,
        out_mb: number("out_mb")?,
        note: match (field("stackmaps"), field("method_ids"), field("site_ids")) {
            (Ok(s), _, _) => format!("stack maps {s}"),
            (_, Ok(m), Ok(s)) => format!("method ids {m}, site ids {s}"),
            _ => String::new(),
        },
    })
}

// ---------------------------------------------------------------------------------------------------------------

fn main() -> ExitCode {
    let opts = match parse_args() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("rewriter-bench: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("bench/ has a parent")
        .to_path_buf();
    let target = match std::env::var_os("CARGO_TARGET_DIR") {
        Some(t) => workspace.join(t),
        None => workspace.join("target"),
    };
    let jdks = discover_jdks();
    for jdk in &jdks {
        println!(
            "JDK {} (feature {}) at {}",
            jdk.version,
            jdk.feature,
            jdk.home.display()
        );
    }

    let corpus_dir = match opts
        .corpus
        .clone()
        .map(Ok)
        .unwrap_or_else(|| default_corpus(&jdks, &target))
    {
        Ok(d) => d,
        Err(e) => {
            eprintln!("rewriter-bench: {e}");
            return ExitCode::from(2);
        }
    };
    let corpus = match load_corpus(&corpus_dir) {
        Ok(c) if !c.classes.is_empty() => c,
        Ok(_) => {
            eprintln!(
                "rewriter-bench: no .class files under {}",
                corpus_dir.display()
            );
            return ExitCode::from(2);
        }
        Err(e) => {
            eprintln!("rewriter-bench: {e}");
            return ExitCode::from(2);
        }
    };
    let corpus_mb = corpus.bytes as f64 / 1e6;
    println!(
        "corpus: {} ({} classes, {:.1} MB = {} bytes, loaded into memory)",
        corpus_dir.display(),
        corpus.classes.len(),
        corpus_mb,
        corpus.bytes
    );
    println!(
        "machine: {} ({} hardware threads); every tool runs single-threaded",
        cpu_model(),
        hw_threads()
    );

    let mut rows: Vec<Measurement> = Vec::new();
    let mut notes: Vec<String> = Vec::new();

    println!(
        "\n== instr (Rust, in-process, 1 warm-up pass, best of {})",
        opts.passes
    );
    rows.push(measure_rust(&corpus, "copy", opts.passes, |errs| {
        rust_pass(&corpus, instr_rewriter::read_write, errs)
    }));
    rows.push(measure_rust(&corpus, "nop", opts.passes, |errs| {
        rust_pass(&corpus, instr_rewriter::nop_edit, errs)
    }));
    rows.push(measure_probes(&corpus, opts.passes));

    if opts.java {
        let heap = opts
            .java_heap
            .clone()
            .unwrap_or_else(|| default_heap(corpus.bytes));
        run_java_side(
            &opts,
            &jdks,
            &target,
            &workspace,
            &corpus_dir,
            &heap,
            &mut rows,
            &mut notes,
        );
    } else {
        notes.push("Java side skipped (--no-java)".into());
    }

    for row in &rows {
        if row.classes != corpus.classes.len() as u64 {
            notes.push(format!(
                "{} {} processed {} classes, instr {}: the corpora differ!",
                row.tool,
                row.mode,
                row.classes,
                corpus.classes.len()
            ));
        }
    }
    print_report(&rows, &notes, corpus.classes.len(), corpus_mb);
    ExitCode::SUCCESS
}

/// -Xms/-Xmx for the Java benchmarks: 3 GB, or 20x the corpus if that is more.
fn default_heap(corpus_bytes: u64) -> String {
    let mb = (corpus_bytes * 20 / (1 << 20)).max(3 << 10);
    format!("{mb}m")
}

#[allow(clippy::too_many_arguments)]
fn run_java_side(
    opts: &Options,
    jdks: &[Jdk],
    target: &Path,
    workspace: &Path,
    corpus_dir: &Path,
    heap: &str,
    rows: &mut Vec<Measurement>,
    notes: &mut Vec<String>,
) {
    let out_dir = target.join("bench-java");
    let sources = workspace.join("bench/java");
    let corpus_arg = corpus_dir.display().to_string();
    let common = |mode: &str| -> Vec<String> {
        vec![
            "--mode".into(),
            mode.into(),
            "--warmup".into(),
            opts.java_warmup.to_string(),
            "--passes".into(),
            opts.passes.to_string(),
            corpus_arg.clone(),
        ]
    };

    // ASM runs on JDK 17 (the agent's platform) when there is one, else on the newest JDK.
    let asm_jdk = jdks.iter().rev().find(|j| j.feature == 17).or(jdks.last());
    match asm_jdk {
        None => notes.push(format!("ASM skipped: no JDK under {JVM_ROOT}")),
        Some(_) if !Path::new(ASM_JAR).is_file() || !Path::new(ASM_COMMONS_JAR).is_file() => notes
            .push(format!(
            "ASM skipped: {ASM_JAR} or {ASM_COMMONS_JAR} missing (install Debian's libasm-java: \
             /work/shared/workloads/install.sh)"
        )),
        Some(jdk) => {
            println!(
                "\n== ASM ({ASM_JAR} on JDK {}, {} warm-up passes, best of {})",
                jdk.version, opts.java_warmup, opts.passes
            );
            let asm_cp = format!("{ASM_JAR}:{ASM_COMMONS_JAR}");
            match javac(jdk, Some(&asm_cp), &sources.join("AsmBench.java"), &out_dir) {
                Err(e) => notes.push(format!("ASM skipped: {e}")),
                Ok(()) => {
                    let cp = format!("{asm_cp}:{}", out_dir.display());
                    for mode in ["copy", "nop", "probes", "probes-advice"] {
                        match run_java(jdk, heap, &cp, "AsmBench", &common(mode)) {
                            Ok(m) => rows.push(m),
                            Err(e) => notes.push(format!("ASM {mode} failed: {e}")),
                        }
                    }
                    notes.push(
                        "ASM probes: the instr probe insertions by a plain MethodVisitor, ClassWriter(reader, \
                         COMPUTE_MAXS), frames kept as read; probes-advice: the same with asm-commons' \
                         AdviceAdapter, which (being a LocalVariablesSorter) needs EXPAND_FRAMES"
                            .into(),
                    );
                }
            }
        }
    }

    match jdks.iter().rev().find(|j| j.feature >= 24) {
        None => notes.push(format!(
            "ClassFile API skipped: it needs a JDK >= 24 under {JVM_ROOT} (java.lang.classfile is final since 24)"
        )),
        Some(jdk) => {
            println!(
                "\n== JDK ClassFile API (JDK {}, {} warm-up passes, best of {})",
                jdk.version, opts.java_warmup, opts.passes
            );
            match javac(jdk, None, &sources.join("ClassFileBench.java"), &out_dir) {
                Err(e) => notes.push(format!("ClassFile API skipped: {e}")),
                Ok(()) => {
                    let cp = out_dir.display().to_string();
                    for mode in ["copy", "nop", "nop-dropmaps"] {
                        match run_java(jdk, heap, &cp, "ClassFileBench", &common(mode)) {
                            Ok(m) => rows.push(m),
                            Err(e) => notes.push(format!("ClassFile API {mode} failed: {e}")),
                        }
                    }
                    notes.push(
                        "ClassFile API nop: the API cannot keep a changed method's StackMapTable; with its default \
                         (STACK_MAPS_WHEN_REQUIRED) it regenerates the frames (data-flow analysis) where ASM keeps \
                         and shifts them; nop-dropmaps (DROP_STACK_MAPS, the only other option) writes no frames at all: \
                         invalid output, shown for information only"
                            .into(),
                    );
                }
            }
        }
    }
}

fn print_report(rows: &[Measurement], notes: &[String], classes: usize, mb: f64) {
    println!("\n== Results: {classes} classes, {mb:.1} MB; best of the timed passes; MB = 10^6 bytes of input");
    println!(
        "{:<10} {:<14} {:>12} {:>9} {:>9} {:>9} {:>7}  note",
        "tool", "mode", "classes/s", "MB/s", "seconds", "out MB", "errors"
    );
    let mut sorted: Vec<&Measurement> = rows.iter().collect();
    let mode_rank = |m: &str| match m {
        "copy" => 0,
        "nop" => 1,
        "nop-dropmaps" => 2,
        "probes" => 3,
        _ => 4,
    };
    let tool_rank = |t: &str| match t {
        "instr" => 0,
        "asm" => 1,
        _ => 2,
    };
    sorted.sort_by_key(|m| (mode_rank(&m.mode), tool_rank(&m.tool)));
    for m in sorted {
        let line = format!(
            "{:<10} {:<14} {:>12.0} {:>9.1} {:>9.3} {:>9.1} {:>7}  {}",
            m.tool,
            m.mode,
            m.classes_per_s(),
            m.mb_per_s(),
            m.seconds,
            m.out_mb,
            m.errors,
            m.note
        );
        println!("{}", line.trim_end());
    }

    let find = |tool: &str, mode: &str| rows.iter().find(|m| m.tool == tool && m.mode == mode);
    let ratio = |mode: &str, other: &str| -> Option<f64> {
        Some(find("instr", mode)?.classes_per_s() / find(other, mode)?.classes_per_s())
    };
    let show = |r: Option<f64>| r.map_or_else(|| "n/a".to_string(), |r| format!("{r:.2}"));
    println!();
    for (mode, what) in [("copy", "read+write"), ("nop", "read+edit+write")] {
        println!(
            "ratio {mode:<4} ({what:<15}): instr/ASM = {:>6}   instr/ClassFile-API = {:>6}",
            show(ratio(mode, "asm")),
            show(ratio(mode, "classfile"))
        );
    }
    if let (Some(i), Some(c)) = (find("instr", "nop"), find("classfile", "nop-dropmaps")) {
        println!("ratio nop  vs ClassFile API nop-dropmaps (no frames at all): instr/ClassFile-API = {:.2}", i.classes_per_s() / c.classes_per_s());
    }
    // The ClassFile API has no probes mode.
    println!(
        "ratio probes (all probes): instr/ASM = {:>6}   instr/ClassFile-API = {:>6}",
        show(ratio("probes", "asm")),
        "n/a"
    );
    if let (Some(i), Some(a)) = (find("instr", "probes"), find("asm", "probes-advice")) {
        println!(
            "ratio probes vs ASM probes-advice (AdviceAdapter, EXPAND_FRAMES): instr/ASM = {:.2}",
            i.classes_per_s() / a.classes_per_s()
        );
    }
    for m in rows.iter().filter(|m| m.errors > 0) {
        println!(
            "note: {} {} had {} errors (counted as processed)",
            m.tool, m.mode, m.errors
        );
    }
    for n in notes {
        println!("note: {n}");
    }
    if let Some(i) = find("instr", "nop") {
        if i.out_mb == i.mb {
            println!("note: instr nop output is exactly as large as its input: is nop_edit still a stub?");
        }
    }
    for (mode, what) in [("nop", "read+edit+write"), ("probes", "all probes")] {
        match ratio(mode, "asm") {
            Some(r) => println!(
                "target \"instr {what} >= {TARGET_VS_ASM}x ASM classes/s\": {} (ratio {r:.2})",
                if r >= TARGET_VS_ASM { "PASS" } else { "FAIL" }
            ),
            None => println!(
                "target \"instr {what} >= {TARGET_VS_ASM}x ASM classes/s\": FAIL (no ASM figure)"
            ),
        }
    }
}

fn cpu_model() -> String {
    fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines().find_map(|l| {
                l.strip_prefix("model name")
                    .map(|r| r.trim_start_matches([' ', '\t', ':']).to_string())
            })
        })
        .unwrap_or_else(|| "unknown CPU".into())
}

fn hw_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}
