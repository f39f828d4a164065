//! A javap-like listing of a method: code, exception table and stack map frames. For debugging edits
//! (`rewrite-class --dump`) and for snapshot tests of the exact bytes a probe inserts.

use std::fmt::Write;

use crate::attributes::code::CodeAttribute;
use crate::attributes::names;
use crate::attributes::stack_map::{self, VType};
use crate::bytecode::instructions::{branch_offset, local_index, read_switch, Instructions};
use crate::bytecode::opcode::{self as op, Shape};
use crate::bytes::read_u2;
use crate::classfile::{access, ClassFile, Member};
use crate::constant_pool::{Constant, ConstantPool};
use crate::error::Result;

/// Lists every method of `class` whose name (or name+descriptor) equals `selector`; `*` lists all.
pub fn list_methods(class: &ClassFile<'_>, selector: &str) -> Result<String> {
    let mut s = String::new();
    for m in &class.methods {
        let name = class.pool.text(m.name_index);
        let descriptor = class.pool.text(m.descriptor_index);
        if selector == "*" || selector == name || selector == format!("{name}{descriptor}") {
            list_method(class, m, &mut s)?;
        }
    }
    Ok(s)
}

fn list_method(class: &ClassFile<'_>, m: &Member<'_>, s: &mut String) -> Result<()> {
    let pool = &class.pool;
    let _ = writeln!(
        s,
        "{}.{}{}",
        String::from_utf8_lossy(class.name()),
        pool.text(m.name_index),
        pool.text(m.descriptor_index)
    );
    let Some(a) = class.member_attribute(m, names::CODE) else {
        s.push_str("  (no code)\n");
        return Ok(());
    };
    let code = CodeAttribute::read(&a)?;
    let _ = writeln!(
        s,
        "  max_stack={} max_locals={} code_length={}",
        code.max_stack,
        code.max_locals,
        code.code.len()
    );
    for insn in Instructions::new(code.code, code.code_offset) {
        let insn = insn?;
        let _ = write!(s, "  {:>5}: {}", insn.pc, op::name(insn.opcode));
        let pc = insn.pc as usize;
        let c = code.code;
        match op::shape(insn.opcode) {
            Shape::Branch16 | Shape::Branch32 => {
                let _ = write!(s, " {}", insn.pc as i64 + branch_offset(c, insn) as i64);
            }
            Shape::TableSwitch | Shape::LookupSwitch => {
                let sw = read_switch(c, insn.pc);
                let _ = write!(s, " {{");
                for (key, offset) in &sw.cases {
                    let _ = write!(s, " {key}: {}", insn.pc as i64 + *offset as i64);
                }
                let _ = write!(s, " default: {} }}", insn.pc as i64 + sw.default as i64);
            }
            Shape::Wide => {
                let _ = write!(
                    s,
                    " {} {}",
                    op::name(c[pc + 1]),
                    local_index(c, insn).unwrap_or(0)
                );
                if c[pc + 1] == op::IINC {
                    let _ = write!(s, " {}", read_u2(c, pc + 4) as i16);
                }
            }
            _ => operands(pool, c, pc, insn.opcode, s),
        }
        s.push('\n');
    }
    for h in &code.exception_table {
        let catch = if h.catch_type == 0 {
            "any".to_string()
        } else {
            class_text(pool, h.catch_type)
        };
        let _ = writeln!(
            s,
            "  try [{}, {}) -> {} catch {}",
            h.start_pc, h.end_pc, h.handler_pc, catch
        );
    }
    if let Some(smt) = code
        .attributes
        .iter()
        .find(|a| class.attribute_name(a) == names::STACK_MAP_TABLE)
    {
        let is_static = m.access & access::STATIC != 0;
        let name = pool.utf8(m.name_index)?;
        let descriptor = pool.utf8(m.descriptor_index)?;
        let initial =
            stack_map::initial_locals(class.name(), class.this_class, name, descriptor, is_static)?;
        for f in stack_map::decode(smt.data, smt.offset, pool, &initial)? {
            let _ = writeln!(
                s,
                "  frame {}: locals [{}] stack [{}]",
                f.offset,
                types(&f.locals),
                types(&f.stack)
            );
        }
    }
    Ok(())
}

fn types(list: &[VType<'_>]) -> String {
    list.iter()
        .map(|t| match t {
            VType::Top => "top".to_string(),
            VType::Integer => "int".to_string(),
            VType::Float => "float".to_string(),
            VType::Long => "long".to_string(),
            VType::Double => "double".to_string(),
            VType::Null => "null".to_string(),
            VType::UninitializedThis => "uninitializedThis".to_string(),
            VType::Object(c) => String::from_utf8_lossy(&c.name).into_owned(),
            VType::Uninitialized(pc) => format!("uninitialized({pc})"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn class_text(pool: &ConstantPool<'_>, index: u16) -> String {
    pool.class_name(index)
        .map(|n| String::from_utf8_lossy(n).into_owned())
        .unwrap_or_else(|_| format!("#{index}"))
}

fn constant_text(pool: &ConstantPool<'_>, index: u16) -> String {
    match pool.get(index) {
        Ok(Constant::Integer(v)) => format!("int {v}"),
        Ok(Constant::Float(v)) => format!("float {}", f32::from_bits(v)),
        Ok(Constant::Long(v)) => format!("long {v}"),
        Ok(Constant::Double(v)) => format!("double {}", f64::from_bits(v)),
        Ok(Constant::String { value }) => format!("{:?}", pool.text(value)),
        Ok(Constant::Class { .. }) => format!("class {}", class_text(pool, index)),
        Ok(
            Constant::Fieldref { .. }
            | Constant::Methodref { .. }
            | Constant::InterfaceMethodref { .. },
        ) => match pool.member_ref(index) {
            Ok((c, n, d)) => format!(
                "{}.{}:{}",
                String::from_utf8_lossy(c),
                String::from_utf8_lossy(n),
                String::from_utf8_lossy(d)
            ),
            Err(_) => format!("#{index}"),
        },
        Ok(Constant::InvokeDynamic { bootstrap, .. } | Constant::Dynamic { bootstrap, .. }) => {
            match pool.dynamic(index) {
                Ok((n, d)) => format!(
                    "#{bootstrap}:{}:{}",
                    String::from_utf8_lossy(n),
                    String::from_utf8_lossy(d)
                ),
                Err(_) => format!("#{index}"),
            }
        }
        Ok(other) => format!("{other:?}"),
        Err(_) => format!("#{index}"),
    }
}

fn operands(pool: &ConstantPool<'_>, c: &[u8], pc: usize, opcode: u8, s: &mut String) {
    let u2 = || read_u2(c, pc + 1);
    let _ = match opcode {
        op::BIPUSH => write!(s, " {}", c[pc + 1] as i8),
        op::SIPUSH => write!(s, " {}", u2() as i16),
        op::LDC => write!(s, " {}", constant_text(pool, c[pc + 1] as u16)),
        op::LDC_W | op::LDC2_W | op::GETSTATIC..=op::INVOKEDYNAMIC => {
            write!(s, " {}", constant_text(pool, u2()))
        }
        op::NEW | op::ANEWARRAY | op::CHECKCAST | op::INSTANCEOF => {
            write!(s, " {}", class_text(pool, u2()))
        }
        op::MULTIANEWARRAY => write!(s, " {} dim {}", class_text(pool, u2()), c[pc + 3]),
        op::NEWARRAY => write!(
            s,
            " {}",
            [
                "?", "?", "?", "?", "boolean", "char", "float", "double", "byte", "short", "int",
                "long"
            ]
            .get(c[pc + 1] as usize)
            .unwrap_or(&"?")
        ),
        op::ILOAD..=op::ALOAD | op::ISTORE..=op::ASTORE | op::RET => write!(s, " {}", c[pc + 1]),
        op::IINC => write!(s, " {} {}", c[pc + 1], c[pc + 2] as i8),
        _ => Ok(()),
    };
}
