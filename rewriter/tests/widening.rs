//! Branches pushed past ±32 KB by an edit are widened (goto→goto_w, jsr→jsr_w, if→inverted if around a
//! goto_w, with the new frame it needs), and the result verifies and runs on every installed JDK.

mod corpus;

use instr_rewriter::bytecode::opcode as op;
use instr_rewriter::classfile::ClassFile;
use instr_rewriter::edit::Insertions;
use instr_rewriter::pool_builder::PoolBuilder;
use instr_rewriter::{dump, rewrite, MethodEdit, MethodView, Options};

/// Inserts two nops before every instruction: triples the distance of every branch.
struct NopEverywhere;

impl MethodEdit for NopEverywhere {
    fn plan(
        &self,
        m: &MethodView<'_, '_>,
        _: &mut PoolBuilder<'_, '_>,
        out: &mut Insertions,
    ) -> instr_rewriter::Result<()> {
        for insn in m.insns {
            out.before(insn.pc, &[op::NOP, op::NOP]);
        }
        Ok(())
    }
}

fn u2(v: &mut Vec<u8>, x: u16) {
    v.extend_from_slice(&x.to_be_bytes());
}
fn u4(v: &mut Vec<u8>, x: u32) {
    v.extend_from_slice(&x.to_be_bytes());
}
fn utf8(v: &mut Vec<u8>, s: &str) {
    v.push(1);
    u2(v, s.len() as u16);
    v.extend_from_slice(s.as_bytes());
}

/// Pool: 1 "W", 2 Class W, 3 "java/lang/Object", 4 Class Object, 5 "f", 6 "(I)I", 7 NaT f, 8 Methodref W.f,
/// 9 "java/lang/System", 10 Class System, 11 "exit", 12 "(I)V", 13 NaT exit, 14 Methodref System.exit,
/// 15 "main", 16 "([Ljava/lang/String;)V", 17 "Code", 18 "StackMapTable", 19 "g", 20 "()V", 21 NaT g, 22 Methodref W.g
fn pool() -> Vec<u8> {
    let mut p = Vec::new();
    u2(&mut p, 23);
    utf8(&mut p, "W");
    p.extend_from_slice(&[7, 0, 1]);
    utf8(&mut p, "java/lang/Object");
    p.extend_from_slice(&[7, 0, 3]);
    utf8(&mut p, "f");
    utf8(&mut p, "(I)I");
    p.extend_from_slice(&[12, 0, 5, 0, 6, 10, 0, 2, 0, 7]);
    utf8(&mut p, "java/lang/System");
    p.extend_from_slice(&[7, 0, 9]);
    utf8(&mut p, "exit");
    utf8(&mut p, "(I)V");
    p.extend_from_slice(&[12, 0, 11, 0, 12, 10, 0, 10, 0, 13]);
    utf8(&mut p, "main");
    utf8(&mut p, "([Ljava/lang/String;)V");
    utf8(&mut p, "Code");
    utf8(&mut p, "StackMapTable");
    utf8(&mut p, "g");
    utf8(&mut p, "()V");
    p.extend_from_slice(&[12, 0, 19, 0, 20, 10, 0, 2, 0, 21]);
    p
}

fn method(
    out: &mut Vec<u8>,
    name: u16,
    descriptor: u16,
    max_stack: u16,
    max_locals: u16,
    code: &[u8],
    frames: Option<&[u8]>,
) {
    u2(out, 0x0009); // public static
    u2(out, name);
    u2(out, descriptor);
    u2(out, 1);
    u2(out, 17);
    let mut body = Vec::new();
    u2(&mut body, max_stack);
    u2(&mut body, max_locals);
    u4(&mut body, code.len() as u32);
    body.extend_from_slice(code);
    u2(&mut body, 0);
    match frames {
        Some(f) => {
            u2(&mut body, 1);
            u2(&mut body, 18);
            u4(&mut body, f.len() as u32);
            body.extend_from_slice(f);
        }
        None => u2(&mut body, 0),
    }
    u4(out, body.len() as u32);
    out.extend_from_slice(&body);
}

const SPAN: usize = 12_000;

/// f(n) counts n down to 0 and returns the number of turns. The loop test `ifle EXIT` jumps forward over a
/// 12 KB body and the `goto LOOP` jumps back over it; tripling the code pushes both past 32 KB.
/// main exits with f(0)*10 + f(5) = 5.
fn f_code() -> (Vec<u8>, Vec<u8>) {
    let mut c = vec![op::ICONST_0, op::ISTORE_1];
    let loop_at = c.len();
    c.extend_from_slice(&[op::ILOAD_0, op::IFLE, 0, 0]);
    let ifle_at = c.len() - 3;
    c.extend_from_slice(&[op::IINC, 0, 0xff, op::IINC, 1, 1]);
    c.extend(std::iter::repeat_n(op::NOP, SPAN));
    let back_at = c.len();
    c.extend_from_slice(&[op::GOTO, 0, 0]);
    let exit_at = c.len();
    c.extend_from_slice(&[op::ILOAD_1, op::IRETURN]);
    let patch = |c: &mut Vec<u8>, at: usize, to: usize| {
        let off = (to as i64 - at as i64) as i16;
        c[at + 1..at + 3].copy_from_slice(&off.to_be_bytes());
    };
    patch(&mut c, ifle_at, exit_at);
    patch(&mut c, back_at, loop_at);
    // Frames at LOOP (append_frame: locals [int int]) and EXIT (same_frame_extended).
    let mut frames = Vec::new();
    u2(&mut frames, 2);
    frames.push(252);
    u2(&mut frames, loop_at as u16);
    frames.push(1);
    frames.push(251);
    u2(&mut frames, (exit_at - loop_at - 1) as u16);
    (c, frames)
}

/// g(): an old-style subroutine called with jsr across a 20 KB gap (class version 49 only).
fn g_code() -> Vec<u8> {
    let mut c = vec![op::JSR, 0, 0, op::GOTO, 0, 0];
    c.extend(std::iter::repeat_n(op::NOP, SPAN));
    let sub = c.len();
    c.extend_from_slice(&[op::ASTORE_0, op::RET, 0]);
    let end = c.len();
    c.push(op::RETURN);
    c[1..3].copy_from_slice(&(sub as i16).to_be_bytes());
    c[4..6].copy_from_slice(&((end - 3) as i16).to_be_bytes());
    c
}

fn class(major: u16) -> Vec<u8> {
    let mut b = vec![0xca, 0xfe, 0xba, 0xbe, 0, 0];
    u2(&mut b, major);
    b.extend_from_slice(&pool());
    u2(&mut b, 0x0021);
    u2(&mut b, 2);
    u2(&mut b, 4);
    u2(&mut b, 0);
    u2(&mut b, 0); // fields
    let old = major < 50;
    u2(&mut b, if old { 3 } else { 2 });
    let (f, frames) = f_code();
    method(
        &mut b,
        5,
        6,
        2,
        2,
        &f,
        if old { None } else { Some(&frames) },
    );
    let main = [
        op::ICONST_0,
        op::INVOKESTATIC,
        0,
        8,
        op::BIPUSH,
        10,
        op::IMUL,
        op::ICONST_5,
        op::INVOKESTATIC,
        0,
        8,
        op::IADD,
        op::INVOKESTATIC,
        0,
        14,
        op::RETURN,
    ];
    let mut main = main.to_vec();
    if old {
        main.splice(0..0, [op::INVOKESTATIC, 0, 22]);
        method(&mut b, 19, 20, 1, 1, &g_code(), None);
    }
    method(&mut b, 15, 16, 3, 1, &main, None);
    u2(&mut b, 0); // attributes
    b
}

fn run_everywhere(dir: &std::path::Path) {
    for home in corpus::jdk_homes() {
        let out = std::process::Command::new(home.join("bin/java"))
            .args([
                "-Xverify:all",
                "-XX:+UnlockDiagnosticVMOptions",
                "-XX:+BytecodeVerificationLocal",
                "-cp",
            ])
            .arg(dir)
            .arg("W")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(5), "{}: {stderr}", home.display());
    }
}

#[test]
fn widened_branches_verify_and_run() {
    for major in [52u16, 49] {
        let original = class(major);
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("W.class"), &original).unwrap();
        run_everywhere(dir.path()); // the hand-built class itself is valid

        let r = rewrite(&original, &NopEverywhere, Options::default()).unwrap();
        let bytes = r.bytes.expect("edited");
        assert!(r.warnings.is_empty(), "{:?}", r.warnings);
        let c = ClassFile::read(&bytes).unwrap();
        let listing = dump::list_methods(&c, "*").unwrap();
        assert!(
            listing.contains("ifgt"),
            "ifle was not inverted:\n{}",
            &listing[..2000.min(listing.len())]
        );
        assert!(
            listing.matches("goto_w").count() >= 2 || (major < 50 && listing.contains("goto_w")),
            "far gotos were not widened"
        );
        if major < 50 {
            assert!(listing.contains("jsr_w"), "jsr was not widened");
        } else {
            // the fall-through of the inverted branch got a frame with the two int locals
            assert!(
                listing.contains("locals [int, int] stack []"),
                "{}",
                listing
                    .lines()
                    .filter(|l| l.contains("frame"))
                    .collect::<Vec<_>>()
                    .join("\n")
            );
        }
        std::fs::write(dir.path().join("W.class"), &bytes).unwrap();
        run_everywhere(dir.path());
    }
}

#[test]
fn a_method_that_would_exceed_64k_is_left_unedited_with_a_warning() {
    let original = class(52);
    // f is ~12 KB; six times that exceeds the limit, while main and the class as a whole are still edited.
    struct Bloat;
    impl MethodEdit for Bloat {
        fn plan(
            &self,
            m: &MethodView<'_, '_>,
            _: &mut PoolBuilder<'_, '_>,
            out: &mut Insertions,
        ) -> instr_rewriter::Result<()> {
            for insn in m.insns {
                out.before(insn.pc, &[op::NOP; 5]);
            }
            Ok(())
        }
    }
    let r = rewrite(&original, &Bloat, Options::default()).unwrap();
    assert_eq!(r.edited_methods, 1, "main is still edited");
    assert_eq!(r.warnings.len(), 1);
    assert!(
        r.warnings[0].contains("65535") && r.warnings[0].contains("method f(I)I"),
        "{}",
        r.warnings[0]
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("W.class"), r.bytes.unwrap()).unwrap();
    run_everywhere(dir.path());
}
