//! Malformed classes under the agent (issue 14): a class the rewriter finds malformed must reach the JVM as it
//! was, so that the program sees the JVM's own error; and a class HotSpot accepts must behave the same rewritten.
//!
//! * `corrupted_classes_fail_as_without_the_agent`: thousands of corrupted variants of real javac output (bit
//!   flips at every byte, every constant-pool index pointed past the pool or at its neighbour, line and local
//!   variable tables pointed at and past the end of the code, truncations, lengths and counts off by one), each
//!   defined at run time through a class loader of its own (so ClassFileLoadHook sees it), linked under
//!   `-Xverify:all` and run; the outcomes with `-agentpath:libinstr.so=rules/all.yaml` must equal those without,
//!   line for line.
//! * `big_methods_defined_at_run_time`: the generated 64 KB and branch-widening classes, defined by a class
//!   loader under the agent, run as without it, and the agent says which method it left unedited.
//!
//! Run with `cargo test --release --test malformed -- --nocapture` for the figures.

mod support;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use support::*;

/// The classes corrupted, from test-classes/faults/, compiled with `-g` so that they have local variable tables.
const FAULT_CLASSES: &[&str] = &["FaultLines", "FaultLambdas"];

// -------------------------------------------------------------------------------------------------------------
// Where the corruptions go: a walk over the class file, independent of the rewriter under test.

/// Positions in one class file worth corrupting.
#[derive(Default, Debug)]
struct Sites {
    pool_count: u16,
    /// Offsets of u2 constant-pool indexes (0 where the format allows "none" is included too).
    pool_refs: Vec<usize>,
    /// Offsets of the u1 index of `ldc`.
    ldc_refs: Vec<usize>,
    /// Offsets of u4 attribute lengths and of u4 `code_length`.
    lengths4: Vec<usize>,
    /// Offsets of u2 counts (pool, interfaces, members, attributes, tables) and Utf8 lengths.
    counts2: Vec<usize>,
    /// (offset of start_pc, code_length) per LineNumberTable entry.
    line_pcs: Vec<(usize, u16)>,
    /// (offset of start_pc, code_length) per LocalVariable(Type)Table entry; length follows start_pc.
    local_pcs: Vec<(usize, u16)>,
}

fn u2(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

fn u4(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// Length of the instruction at `pc` (javac's output: every opcode but the reserved ones).
fn insn_len(code: &[u8], pc: usize) -> usize {
    match code[pc] {
        0x10 | 0x12 | 0x15..=0x19 | 0x36..=0x3a | 0xa9 | 0xbc => 2,
        0x11
        | 0x13
        | 0x14
        | 0x84
        | 0x99..=0xa8
        | 0xb2..=0xb8
        | 0xbb
        | 0xbd
        | 0xc0
        | 0xc1
        | 0xc6
        | 0xc7 => 3,
        0xc5 => 4,
        0xb9 | 0xba | 0xc8 | 0xc9 => 5,
        0xc4 => {
            if code[pc + 1] == 0x84 {
                6
            } else {
                4
            }
        }
        op @ (0xaa | 0xab) => {
            let at = pc + 1 + (3 - pc % 4);
            if op == 0xaa {
                let (low, high) = (u4(code, at + 4) as i32, u4(code, at + 8) as i32);
                at - pc + 12 + 4 * (high - low + 1) as usize
            } else {
                at - pc + 8 + 8 * u4(code, at + 4) as usize
            }
        }
        _ => 1,
    }
}

fn find_sites(b: &[u8]) -> Sites {
    let mut s = Sites {
        pool_count: u2(b, 8),
        ..Sites::default()
    };
    s.counts2.push(8);
    let mut utf8 = BTreeMap::new();
    let mut at = 10;
    let mut i = 1;
    while i < s.pool_count {
        let tag = b[at];
        let size = match tag {
            1 => {
                s.counts2.push(at + 1);
                utf8.insert(i, &b[at + 3..at + 3 + u2(b, at + 1) as usize]);
                3 + u2(b, at + 1) as usize
            }
            3 | 4 => 5,
            5 | 6 => 9,
            7 | 8 | 16 | 19 | 20 => {
                s.pool_refs.push(at + 1);
                3
            }
            9..=12 => {
                s.pool_refs.extend([at + 1, at + 3]);
                5
            }
            17 | 18 => {
                s.pool_refs.push(at + 3);
                5
            }
            15 => {
                s.pool_refs.push(at + 2);
                4
            }
            t => panic!("constant pool tag {t} at {at}"),
        };
        i += if tag == 5 || tag == 6 { 2 } else { 1 };
        at += size;
    }
    s.pool_refs.extend([at + 2, at + 4]);
    at += 6;
    s.counts2.push(at);
    for k in 0..u2(b, at) as usize {
        s.pool_refs.push(at + 2 + 2 * k);
    }
    at += 2 + 2 * u2(b, at) as usize;
    for _members in 0..2 {
        s.counts2.push(at);
        let n = u2(b, at);
        at += 2;
        for _ in 0..n {
            s.pool_refs.extend([at + 2, at + 4]);
            at = attributes(b, at + 6, &utf8, &mut s);
        }
    }
    let end = attributes(b, at, &utf8, &mut s);
    assert_eq!(end, b.len(), "the walk must end where the class file does");
    s
}

/// Walks an attributes_count and its attributes; returns the offset after them.
fn attributes(b: &[u8], mut at: usize, utf8: &BTreeMap<u16, &[u8]>, s: &mut Sites) -> usize {
    s.counts2.push(at);
    let n = u2(b, at);
    at += 2;
    for _ in 0..n {
        s.pool_refs.push(at);
        s.lengths4.push(at + 2);
        let name = utf8.get(&u2(b, at)).copied().unwrap_or(b"");
        let body = at + 6;
        let end = body + u4(b, at + 2) as usize;
        let list = |s: &mut Sites, at: usize, stride: usize, refs: &[usize]| {
            s.counts2.push(at);
            for k in 0..u2(b, at) as usize {
                for r in refs {
                    s.pool_refs.push(at + 2 + stride * k + r);
                }
            }
        };
        match name {
            b"Code" => {
                let code_length = u4(b, body + 4) as usize;
                s.lengths4.push(body + 4);
                let code = &b[body + 8..body + 8 + code_length];
                let mut pc = 0;
                while pc < code.len() {
                    match code[pc] {
                        0x12 => s.ldc_refs.push(body + 8 + pc + 1),
                        0x13 | 0x14 | 0xb2..=0xbb | 0xbd | 0xc0 | 0xc1 | 0xc5 => {
                            s.pool_refs.push(body + 8 + pc + 1)
                        }
                        _ => {}
                    }
                    pc += insn_len(code, pc);
                }
                let table = body + 8 + code_length;
                list(s, table, 8, &[6]);
                let nested = table + 2 + 8 * u2(b, table) as usize;
                let cl = code_length as u16;
                // Nested attributes need the code length: walk them here.
                s.counts2.push(nested);
                let mut a = nested + 2;
                for _ in 0..u2(b, nested) {
                    s.pool_refs.push(a);
                    s.lengths4.push(a + 2);
                    let name = utf8.get(&u2(b, a)).copied().unwrap_or(b"");
                    let data = a + 6;
                    match name {
                        b"LineNumberTable" => {
                            s.counts2.push(data);
                            for k in 0..u2(b, data) as usize {
                                s.line_pcs.push((data + 2 + 4 * k, cl));
                            }
                        }
                        b"LocalVariableTable" | b"LocalVariableTypeTable" => {
                            s.counts2.push(data);
                            for k in 0..u2(b, data) as usize {
                                let e = data + 2 + 10 * k;
                                s.local_pcs.push((e, cl));
                                s.pool_refs.extend([e + 4, e + 6]);
                            }
                        }
                        b"StackMapTable" => stack_map_refs(b, data, s),
                        _ => {}
                    }
                    a = data + u4(b, a + 2) as usize;
                }
                assert_eq!(a, end, "Code attribute walk");
            }
            b"SourceFile" | b"Signature" | b"ConstantValue" | b"NestHost" => s.pool_refs.push(body),
            b"EnclosingMethod" => s.pool_refs.extend([body, body + 2]),
            b"Exceptions" | b"NestMembers" | b"PermittedSubclasses" => list(s, body, 2, &[0]),
            b"InnerClasses" => list(s, body, 8, &[0, 2, 4]),
            b"BootstrapMethods" => {
                s.counts2.push(body);
                let mut e = body + 2;
                for _ in 0..u2(b, body) {
                    s.pool_refs.push(e);
                    list(s, e + 2, 2, &[0]);
                    e += 4 + 2 * u2(b, e + 2) as usize;
                }
            }
            _ => {}
        }
        at = end;
    }
    at
}

/// The Class indexes of `Object` verification types in a StackMapTable.
fn stack_map_refs(b: &[u8], data: usize, s: &mut Sites) {
    let mut at = data + 2;
    let vtypes = |at: &mut usize, n: usize, s: &mut Sites| {
        for _ in 0..n {
            let tag = b[*at];
            if tag == 7 {
                s.pool_refs.push(*at + 1);
            }
            *at += if tag == 7 || tag == 8 { 3 } else { 1 };
        }
    };
    for _ in 0..u2(b, data) {
        let t = b[at] as usize;
        at += 1;
        match t {
            0..=63 => {}
            64..=127 => vtypes(&mut at, 1, s),
            247 => {
                at += 2;
                vtypes(&mut at, 1, s);
            }
            248..=251 => at += 2,
            252..=254 => {
                at += 2;
                vtypes(&mut at, t - 251, s);
            }
            255 => {
                at += 2;
                let locals = u2(b, at) as usize;
                at += 2;
                vtypes(&mut at, locals, s);
                let stack = u2(b, at) as usize;
                at += 2;
                vtypes(&mut at, stack, s);
            }
            _ => panic!("frame type {t}"),
        }
    }
}

// -------------------------------------------------------------------------------------------------------------
// The variants

fn with_u2(b: &[u8], at: usize, v: u16) -> Vec<u8> {
    let mut c = b.to_vec();
    c[at..at + 2].copy_from_slice(&v.to_be_bytes());
    c
}

fn with_u4(b: &[u8], at: usize, v: u32) -> Vec<u8> {
    let mut c = b.to_vec();
    c[at..at + 4].copy_from_slice(&v.to_be_bytes());
    c
}

/// Every variant of `b`, the original first, each with a label saying what was done. Deterministic: the same
/// class gives the same list in the same order.
fn variants(b: &[u8]) -> Vec<(String, Vec<u8>)> {
    let s = find_sites(b);
    let count = s.pool_count;
    let mut v = vec![("original".to_string(), b.to_vec())];
    // One bit per byte, a different one from byte to byte, so every field and every bit position is hit.
    for at in 0..b.len() {
        let mut c = b.to_vec();
        let bit = (at * 5 + 3) % 8;
        c[at] ^= 1 << bit;
        v.push((format!("flip bit {bit} at {at}"), c));
    }
    // Past the end of the pool is where the rewriter's appended entries go: count and a little beyond.
    for &at in &s.pool_refs {
        let old = u2(b, at);
        for new in [count, count + 1, count + 3, old.wrapping_add(1), 0xffff] {
            v.push((
                format!("pool index at {at}: #{old} -> #{new}"),
                with_u2(b, at, new),
            ));
        }
    }
    for &at in &s.ldc_refs {
        let old = b[at];
        for new in [count.min(255) as u8, old.wrapping_add(1), 255] {
            let mut c = b.to_vec();
            c[at] = new;
            v.push((format!("ldc index at {at}: #{old} -> #{new}"), c));
        }
    }
    for &(at, code_length) in &s.line_pcs {
        for pc in [code_length - 1, code_length, code_length + 1, 0xffff] {
            v.push((
                format!("LineNumberTable start_pc at {at} -> {pc}"),
                with_u2(b, at, pc),
            ));
        }
    }
    for &(at, code_length) in &s.local_pcs {
        let (start, length) = (u2(b, at), u2(b, at + 2));
        let mut edit = |what: String, new_start: u16, new_length: u16| {
            let c = with_u2(&with_u2(b, at, new_start), at + 2, new_length);
            v.push((format!("local variable at {at}: {what}"), c));
        };
        edit(format!("start {code_length}, length 0"), code_length, 0);
        edit(
            format!("start {}, length 1", code_length - 1),
            code_length - 1,
            1,
        );
        edit(
            format!("start {}, length 2", code_length - 1),
            code_length - 1,
            2,
        );
        edit(
            format!("start {}, length 0", code_length + 1),
            code_length + 1,
            0,
        );
        edit(
            "length to the end + 1".into(),
            start,
            code_length - start + 1,
        );
        edit("length to the end".into(), start, code_length - start);
        edit("length 0xffff".into(), start, 0xffff);
        edit("start + 1".into(), start + 1, length);
    }
    for &at in &s.lengths4 {
        let old = u4(b, at);
        for new in [old.wrapping_sub(1), old + 1] {
            v.push((
                format!("u4 length at {at}: {old} -> {new}"),
                with_u4(b, at, new),
            ));
        }
    }
    for &at in &s.counts2 {
        let old = u2(b, at);
        for new in [old.wrapping_sub(1), old.wrapping_add(1)] {
            v.push((
                format!("u2 count at {at}: {old} -> {new}"),
                with_u2(b, at, new),
            ));
        }
    }
    for len in (0..b.len()).step_by(11).chain(b.len() - 3..b.len()) {
        v.push((format!("truncated to {len}"), b[..len].to_vec()));
    }
    v
}

// -------------------------------------------------------------------------------------------------------------
// Running them

/// The outcome line as compared. Three things vary between runs for reasons that have nothing to do with the
/// class: identity hash codes (loader names in ClassCastException and LinkageError messages,
/// `@5e2de80c`), the address in a hidden class's name (a lambda's class, `$$Lambda$1025/0x000000080033c208`,
/// which depends on what else was loaded: the agent loads classes of its own), and, for a VerifyError, the bytecode offsets and the dump of the method's bytes and frames
/// that HotSpot appends after the first line: the rewriter moves code by design, so offsets shift, while the
/// reason (the first line, with its numbers masked) stays the same.
fn normalise(line: &str) -> String {
    let mut line = line.to_string();
    const VERIFY: &str = "java.lang.VerifyError: ";
    if let Some(at) = line.find(VERIFY) {
        let reason = &line[at + VERIFY.len()..];
        let reason = &reason[..reason.find("\\n").unwrap_or(reason.len())];
        line = format!("{}{VERIFY}{}", &line[..at], mask_digits(reason));
    }
    mask_hex_after(&mask_hex_after(&line, "@"), "/0x")
}

/// Replaces the hexadecimal digits right after each `marker` with `#`.
fn mask_hex_after(line: &str, marker: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.find(marker) {
        out.push_str(&rest[..at + marker.len()]);
        rest = &rest[at + marker.len()..];
        let hex = rest.len()
            - rest
                .trim_start_matches(|c: char| c.is_ascii_hexdigit())
                .len();
        if hex > 0 {
            out.push('#');
            rest = &rest[hex..];
        }
    }
    out.push_str(rest);
    out
}

fn mask_digits(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut in_number = false;
    for c in s.chars() {
        if c.is_ascii_digit() {
            if !in_number {
                out.push('#');
            }
            in_number = true;
        } else {
            in_number = false;
            out.push(c);
        }
    }
    out
}

fn compile_faults(jdk: &Jdk) -> PathBuf {
    let dir = scratch(&format!("faults-{}", jdk.key()));
    let srcs: Vec<PathBuf> = FAULT_CLASSES
        .iter()
        .map(|c| workspace().join(format!("test-classes/faults/{c}.java")))
        .collect();
    javac(jdk, &srcs, &dir, &["-g"]);
    dir
}

fn agent_option(out_dir: &Path) -> String {
    format!(
        "-agentpath:{}=rules={},file={}/instr-%p",
        agent_lib().display(),
        workspace().join("rules/all.yaml").display(),
        out_dir.display()
    )
}

/// Runs DefineVariants over `file` with or without the agent; returns stdout's outcome lines and stderr.
fn define_all(jdk: &Jdk, file: &Path, agent: Option<&Path>) -> (Vec<String>, String) {
    let harness = compile_harness(jdk);
    let mut cmd = Command::new(jdk.bin("java"));
    cmd.args(VERIFY_FLAGS);
    if let Some(dir) = agent {
        cmd.arg(agent_option(dir)).current_dir(dir);
    }
    cmd.arg("-cp").arg(&harness).arg("DefineVariants").arg(file);
    let out = run(&mut cmd);
    let stdout = text(&out.stdout);
    let stderr = text(&out.stderr);
    assert!(
        out.status.success() && stdout.ends_with("DONE\n"),
        "DefineVariants (agent: {}) did not finish: {}\n--- stdout (tail)\n{}\n--- stderr (tail)\n{}",
        agent.is_some(),
        out.status,
        tail(&stdout, 10),
        tail(&stderr, 40)
    );
    let lines = stdout
        .lines()
        .filter(|l| *l != "DONE")
        .map(str::to_string)
        .collect();
    (lines, stderr)
}

#[test]
fn corrupted_classes_fail_as_without_the_agent() {
    for jdk in all_jdks() {
        let classes = compile_faults(&jdk);
        let dir = scratch(&format!("malformed-{}", jdk.key()));
        let mut labels = Vec::new();
        let mut file = Vec::new();
        let mut per_class = Vec::new();
        for name in FAULT_CLASSES {
            let bytes = fs::read(classes.join(format!("{name}.class"))).unwrap();
            let vs = variants(&bytes);
            per_class.push(format!(
                "{name} {} bytes: {} variants",
                bytes.len(),
                vs.len()
            ));
            for (label, b) in vs {
                labels.push(format!("{name}: {label}"));
                file.extend_from_slice(&(b.len() as u32).to_be_bytes());
                file.extend_from_slice(&b);
            }
        }
        let mut all = (labels.len() as u32).to_be_bytes().to_vec();
        all.extend_from_slice(&file);
        let variants_file = dir.join("variants.bin");
        fs::write(&variants_file, all).unwrap();

        let (plain, _) = define_all(&jdk, &variants_file, None);
        let agent_dir = dir.join("agent");
        fs::create_dir_all(&agent_dir).unwrap();
        let (agent, agent_err) = define_all(&jdk, &variants_file, Some(&agent_dir));
        assert_eq!(
            plain.len(),
            labels.len(),
            "one line per variant without the agent"
        );
        assert_eq!(
            agent.len(),
            labels.len(),
            "one line per variant with the agent"
        );

        let mut tally: BTreeMap<String, usize> = BTreeMap::new();
        let mut differences = Vec::new();
        let mut by_corruption: BTreeMap<&str, usize> = BTreeMap::new();
        let mut different_outcome = 0;
        for (k, label) in labels.iter().enumerate() {
            let (p, a) = (normalise(&plain[k]), normalise(&agent[k]));
            let kind = p.split([' ', ':']).nth(1).unwrap_or("").to_string();
            *tally.entry(kind).or_default() += 1;
            if p != a {
                let ok = |l: &str| l.split(' ').nth(1) == Some("ok");
                if ok(&p) != ok(&a) {
                    different_outcome += 1;
                }
                let corruption = label.split(' ').nth(1).unwrap_or("");
                *by_corruption.entry(corruption).or_default() += 1;
                differences.push(format!("{label}\n    without: {p}\n    with:    {a}"));
            }
        }
        // The originals must load and run, and be rewritten: otherwise equal outputs would prove nothing.
        for (k, label) in labels.iter().enumerate() {
            if label.ends_with(": original") {
                assert!(plain[k].contains(" ok "), "{label}: {}", plain[k]);
            }
        }
        let reports = agent_report(&agent_dir);
        for name in FAULT_CLASSES {
            assert!(
                reports.contains(&format!("{name}.run()Ljava/lang/String;")),
                "the agent's report does not count {name}.run: was it rewritten?\n{}",
                tail(&agent_err, 20)
            );
        }
        println!("[{}] {}", jdk.version, per_class.join("; "));
        println!(
            "[{}] {} variants, outcomes without the agent: {:?}",
            jdk.version,
            labels.len(),
            tally
        );
        println!(
            "[{}] {} differences with the agent ({} a different outcome), by corruption: {:?}",
            jdk.version,
            differences.len(),
            different_outcome,
            by_corruption
        );
        let outcomes: Vec<String> = labels
            .iter()
            .zip(&plain)
            .map(|(label, outcome)| format!("{label}\t{outcome}"))
            .collect();
        fs::write(dir.join("outcomes.txt"), outcomes.join("\n")).unwrap();
        let listing = dir.join("differences.txt");
        fs::write(&listing, differences.join("\n")).unwrap();
        println!("[{}] all differences: {}", jdk.version, listing.display());
        for d in differences.iter().take(40) {
            println!("[{}] {d}", jdk.version);
        }
        assert!(
            differences.is_empty(),
            "[{}] {} of {} variants behave differently under the agent (first: {})",
            jdk.version,
            differences.len(),
            labels.len(),
            differences[0]
        );
    }
}

/// Every report file the agent wrote into `dir`, concatenated.
fn agent_report(dir: &Path) -> String {
    let mut all = String::new();
    for e in fs::read_dir(dir).unwrap().flatten() {
        if e.path().extension().is_some_and(|x| x == "txt") {
            all.push_str(&fs::read_to_string(e.path()).unwrap_or_default());
        }
    }
    all
}

// -------------------------------------------------------------------------------------------------------------
// The fault suite's big methods, defined at run time

/// Runs `DefineVariants --main classes NAME` under `-Xverify:all`, with the agent when `agent` is given.
fn define_and_run(
    jdk: &Jdk,
    classes: &Path,
    name: &str,
    agent: Option<&Path>,
) -> (Option<i32>, String, String) {
    let harness = compile_harness(jdk);
    let mut cmd = Command::new(jdk.bin("java"));
    cmd.args(VERIFY_FLAGS);
    if let Some(dir) = agent {
        cmd.arg(agent_option(dir)).current_dir(dir);
    }
    cmd.arg("-cp")
        .arg(&harness)
        .arg("DefineVariants")
        .arg("--main")
        .arg(classes)
        .arg(name);
    let out = run(&mut cmd);
    (out.status.code(), text(&out.stdout), text(&out.stderr))
}

#[test]
fn big_methods_defined_at_run_time() {
    for jdk in all_jdks() {
        let dir = scratch(&format!("big-{}", jdk.key()));
        let classes = dir.join("classes");
        let edge = workspace().join("test-classes/edge");
        javac(
            &jdk,
            &[edge.join("BigBranches.java"), edge.join("CodeLimit.java")],
            &classes,
            &[],
        );
        for name in ["BigBranches", "CodeLimit"] {
            let agent_dir = dir.join(format!("agent-{name}"));
            fs::create_dir_all(&agent_dir).unwrap();
            let plain = define_and_run(&jdk, &classes, name, None);
            let with = define_and_run(&jdk, &classes, name, Some(&agent_dir));
            assert_eq!(plain.0, Some(0), "{name} without the agent:\n{}", plain.2);
            assert_eq!(
                (with.0, &with.1),
                (plain.0, &plain.1),
                "{name} under the agent:\n{}",
                tail(&with.2, 20)
            );
            let report = agent_report(&agent_dir);
            // The counts prove the class was rewritten when its loader defined it.
            assert!(
                report.contains(&format!("{name}.main([Ljava/lang/String;)V")),
                "{name}.main has no call count: not rewritten?\n{}",
                tail(&with.2, 20)
            );
            println!("[{}] {name}: {}", jdk.version, plain.1.trim());
            if name == "CodeLimit" {
                assert!(
                    with.2.contains("instr: CodeLimit: ") && with.2.contains("65535-byte limit"),
                    "no warning about the method left unedited:\n{}",
                    with.2
                );
                assert!(
                    !report.contains("CodeLimit.tooBigForNops(I)I"),
                    "tooBigForNops cannot take the probes, yet it was counted"
                );
                let warning = with
                    .2
                    .lines()
                    .find(|l| l.contains("65535-byte limit"))
                    .unwrap();
                println!("[{}] {warning}", jdk.version);
            } else {
                // Each of these has short branches the probes push out of range: counted means widened
                // and verified.
                for m in [
                    "loopAllocs",
                    "forwardReturns",
                    "forwardEdgeFits",
                    "forwardEdgeOver",
                    "backwardEdgeFits",
                    "backwardEdgeOver",
                    "backwardAllocs",
                ] {
                    assert!(
                        report.contains(&format!("BigBranches.{m}(I)I")),
                        "BigBranches.{m} was not counted"
                    );
                }
            }
        }
    }
}
