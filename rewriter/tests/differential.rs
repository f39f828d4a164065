//! Tells a false parse from a true one: our reader and the independent `cafebabe` parser must agree on
//! the structure of every class of every installed JDK image.

mod corpus;

use cafebabe::attributes::{AttributeData, StackMapEntry};
use instr_rewriter::attributes::code::CodeAttribute;
use instr_rewriter::attributes::names;
use instr_rewriter::attributes::stack_map;
use instr_rewriter::bytecode::instructions::Instructions;
use instr_rewriter::classfile::ClassFile;

/// Compares when the modified UTF-8 is also plain UTF-8 (true of nearly every name); returns whether equal.
fn same_text(ours: &[u8], theirs: &str) -> bool {
    match std::str::from_utf8(ours) {
        Ok(s) if !ours.contains(&0xc0) => s == theirs,
        _ => true,
    }
}

fn compare(bytes: &[u8]) -> Result<(), String> {
    let ours = ClassFile::read(bytes).map_err(|e| format!("ours failed: {e}"))?;
    let theirs = cafebabe::parse_class(bytes).map_err(|e| format!("cafebabe failed: {e}"))?;
    let check = |ok: bool, what: &str| {
        if ok {
            Ok(())
        } else {
            Err(format!("disagree on {what}"))
        }
    };
    check(
        ours.major_version == theirs.major_version && ours.minor_version == theirs.minor_version,
        "version",
    )?;
    check(
        same_text(ours.name(), &theirs.this_class.to_string()),
        "this_class",
    )?;
    // cafebabe drops flag bits it has no name for, so compare the bits it knows.
    check(
        ours.access & cafebabe::ClassAccessFlags::all().bits() == theirs.access_flags.bits(),
        "class access",
    )?;
    check(
        (ours.interfaces.len() - 2) / 2 == theirs.interfaces.len(),
        "interface count",
    )?;
    check(ours.fields.len() == theirs.fields.len(), "field count")?;
    check(ours.methods.len() == theirs.methods.len(), "method count")?;
    check(
        ours.attributes.len() == theirs.attributes.len(),
        "class attribute count",
    )?;
    for (f, g) in ours.fields.iter().zip(&theirs.fields) {
        check(
            same_text(ours.pool.utf8(f.name_index).unwrap(), &g.name),
            "field name",
        )?;
        check(
            f.access == g.access_flags.bits() && f.attributes.len() == g.attributes.len(),
            "field",
        )?;
    }
    for (m, g) in ours.methods.iter().zip(&theirs.methods) {
        let name = ours.pool.utf8(m.name_index).unwrap();
        check(same_text(name, &g.name), "method name")?;
        check(m.access == g.access_flags.bits(), "method access")?;
        check(
            m.attributes.len() == g.attributes.len(),
            "method attribute count",
        )?;
        for (a, b) in m.attributes.iter().zip(&g.attributes) {
            check(
                same_text(ours.attribute_name(&a), &b.name),
                "attribute name",
            )?;
            let AttributeData::Code(their_code) = &b.data else {
                continue;
            };
            let code = CodeAttribute::read(&a).map_err(|e| e.to_string())?;
            check(
                code.max_stack == their_code.max_stack && code.max_locals == their_code.max_locals,
                "max_*",
            )?;
            check(code.code == their_code.code, "code bytes")?;
            let pcs: Vec<usize> = Instructions::new(code.code, 0)
                .map(|i| i.unwrap().pc as usize)
                .collect();
            let their_pcs: Vec<usize> = their_code
                .bytecode
                .as_ref()
                .unwrap()
                .opcodes
                .iter()
                .map(|(pc, _)| *pc)
                .collect();
            check(pcs == their_pcs, "instruction boundaries")?;
            check(
                code.exception_table.len() == their_code.exception_table.len(),
                "exception table length",
            )?;
            for (h, t) in code.exception_table.iter().zip(&their_code.exception_table) {
                check(
                    (h.start_pc, h.end_pc, h.handler_pc) == (t.start_pc, t.end_pc, t.handler_pc),
                    "handler range",
                )?;
                check((h.catch_type == 0) == t.catch_type.is_none(), "catch type")?;
            }
            for (ca, cb) in code.attributes.iter().zip(&their_code.attributes) {
                check(
                    same_text(ours.attribute_name(&ca), &cb.name),
                    "code attribute name",
                )?;
                if let AttributeData::StackMapTable(entries) = &cb.data {
                    let offsets =
                        stack_map::frame_offsets(ca.data, ca.offset).map_err(|e| e.to_string())?;
                    let mut theirs_abs = Vec::new();
                    let mut prev: i64 = -1;
                    for e in entries {
                        let d = match e {
                            StackMapEntry::Same { offset_delta }
                            | StackMapEntry::SameLocals1StackItem { offset_delta, .. }
                            | StackMapEntry::Chop { offset_delta, .. }
                            | StackMapEntry::Append { offset_delta, .. }
                            | StackMapEntry::FullFrame { offset_delta, .. } => *offset_delta,
                        };
                        prev += 1 + d as i64;
                        theirs_abs.push(prev as u32);
                    }
                    check(offsets == theirs_abs, "stack map frame offsets")?;
                    check(
                        ours.attribute_name(&ca) == names::STACK_MAP_TABLE,
                        "stack map name",
                    )?;
                }
                if let AttributeData::LineNumberTable(lines) = &cb.data {
                    let ours_lines =
                        instr_rewriter::attributes::debug_tables::read_line_numbers(&ca).unwrap();
                    let same = ours_lines.len() == lines.len()
                        && ours_lines
                            .iter()
                            .zip(lines)
                            .all(|(x, y)| x.start_pc == y.start_pc && x.line == y.line_number);
                    check(same, "line numbers")?;
                }
            }
        }
    }
    Ok(())
}

#[test]
fn reader_agrees_with_cafebabe_on_every_jdk_class() {
    for home in corpus::jdk_homes() {
        let image = corpus::image(&home);
        let mut failures = Vec::new();
        let mut oracle_failed = Vec::new();
        for path in &image.classes {
            let bytes = std::fs::read(path).unwrap();
            match compare(&bytes) {
                Ok(()) => {}
                // The JDK's own classes are valid by definition: when only cafebabe rejects one, the oracle
                // has a gap (it rejects some BootstrapMethods argument kinds), and ours must still parse it.
                Err(e) if e.starts_with("cafebabe failed") => {
                    oracle_failed.push(format!("{}: {e}", path.display()))
                }
                Err(e) => failures.push(format!("{}: {e}", path.display())),
            }
        }
        println!(
            "{}: {} classes compared with cafebabe, {} that cafebabe cannot parse: {:#?}",
            image.jdk,
            image.classes.len(),
            oracle_failed.len(),
            oracle_failed
        );
        assert!(
            oracle_failed.len() < 10,
            "cafebabe rejected too many classes to be a useful oracle"
        );
        assert!(
            failures.is_empty(),
            "{} disagreements, first: {:#?}",
            failures.len(),
            &failures[..failures.len().min(10)]
        );
    }
}

#[test]
fn the_comparison_can_fail() {
    // A class whose code the two parsers read differently must be caught: flip an instruction boundary by
    // changing one opcode's length (nop -> bipush) in an otherwise valid class from the corpus.
    let home = corpus::jdk_homes().into_iter().next().expect("a JDK");
    let image = corpus::image(&home);
    let path = image
        .classes
        .iter()
        .find(|p| p.ends_with("java.base/java/lang/Object.class"))
        .unwrap();
    let bytes = std::fs::read(path).unwrap();
    assert!(compare(&bytes).is_ok());
    let mut broken = bytes.clone();
    let class = ClassFile::read(&bytes).unwrap();
    let m = class
        .methods
        .iter()
        .find(|m| class.member_attribute(m, names::CODE).is_some())
        .unwrap();
    let code = CodeAttribute::read(&class.member_attribute(m, names::CODE).unwrap()).unwrap();
    broken[code.code_offset + 2] = 0xff; // max_stack/max_locals stay; an invalid opcode inside the code
    broken[code.code_offset] = 0xff;
    assert!(compare(&broken).is_err());
}
