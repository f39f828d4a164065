//! Keeps a lambda's class across redefinitions of the class that made it.
//!
//! A redefinition (every start and stop of a probe at run time) gives the redefined class a new constant
//! pool, so each of its `invokedynamic` lambda sites is linked again, and the JDK's lambda factory spins a
//! new hidden class for it. Profiles of code the redefinition left alone still hold the old classes:
//! `HashMap.merge` called with `Integer::sum` from a class started and stopped once has seen three
//! classes at its `apply` call, and C2 no longer inlines it (a 5% slower loop for good, bench/README.md,
//! 2026-11-28). The JDK already reuses a lambda class it finds in its class-data archive, keyed on the
//! factory's arguments (`InnerClassLambdaMetafactory.spinInnerClass`). This patch makes the same method ask
//! `HeapProxyLambdas.classFor` instead of spinning a class at once: it answers with the class made
//! earlier for the same caller and arguments, or spins one and remembers it.
//!
//! The patch replaces each call `invokevirtual generateInnerClass()` in `spinInnerClass` by
//! `invokestatic HeapProxyLambdas.classFor(Object)`: the same three bytes and the same stack effect
//! (the factory in, a class out), so no offset, frame or handler moves. Only the constant pool grows.

use crate::bytecode::instructions::Instructions;
use crate::bytecode::opcode as op;
use crate::bytes::read_u2;
use crate::classfile::ClassFile;
use crate::constant_pool::tag;
use crate::error::Result;

/// The JDK's lambda factory, the one class this patch applies to.
pub const LAMBDA_FACTORY: &str = "java/lang/invoke/InnerClassLambdaMetafactory";
/// Where the patched factory asks for a class; defined by the agent beside HeapProxy.
pub const LAMBDA_CLASSES: &str = "java/lang/HeapProxyLambdas";

const SPIN: &[u8] = b"spinInnerClass";
const GENERATE: &[u8] = b"generateInnerClass";
const RETURNS_CLASS: &[u8] = b"()Ljava/lang/Class;";
const CLASS_FOR: &str = "classFor";
const CLASS_FOR_DESCRIPTOR: &str = "(Ljava/lang/Object;)Ljava/lang/Class;";

/// The patched class file, or None when `bytes` is not the lambda factory or has no call to patch
/// (a JDK whose factory is shaped otherwise keeps making a class per link, as without the agent).
pub fn keep_lambda_classes(bytes: &[u8]) -> Result<Option<Vec<u8>>> {
    let class = ClassFile::read(bytes)?;
    if class.name() != LAMBDA_FACTORY.as_bytes() {
        return Ok(None);
    }
    let calls = generate_calls(&class)?;
    if calls.is_empty() {
        return Ok(None);
    }
    let pool = &class.pool;
    let first_new = pool.count();
    let mut added = Vec::new();
    utf8(&mut added, LAMBDA_CLASSES);
    added.extend_from_slice(&[tag::CLASS]);
    added.extend_from_slice(&first_new.to_be_bytes());
    utf8(&mut added, CLASS_FOR);
    utf8(&mut added, CLASS_FOR_DESCRIPTOR);
    added.push(tag::NAME_AND_TYPE);
    added.extend_from_slice(&(first_new + 2).to_be_bytes());
    added.extend_from_slice(&(first_new + 3).to_be_bytes());
    added.push(tag::METHODREF);
    added.extend_from_slice(&(first_new + 1).to_be_bytes());
    added.extend_from_slice(&(first_new + 4).to_be_bytes());
    let method_ref = first_new + 5;
    let Some(count) = first_new.checked_add(6) else {
        return Ok(None); // a full pool: leave the factory as it is
    };

    // magic and versions, the new count, the old entries, the new ones, then the rest unchanged.
    let pool_end = 10 + pool.raw_entries().len();
    let mut out = Vec::with_capacity(bytes.len() + added.len());
    out.extend_from_slice(&bytes[..8]);
    out.extend_from_slice(&count.to_be_bytes());
    out.extend_from_slice(&bytes[10..pool_end]);
    out.extend_from_slice(&added);
    out.extend_from_slice(&bytes[pool_end..]);
    for at in calls {
        let at = at + added.len();
        out[at] = op::INVOKESTATIC;
        out[at + 1..at + 3].copy_from_slice(&method_ref.to_be_bytes());
    }
    Ok(Some(out))
}

/// Absolute offsets of the calls to `generateInnerClass()` in `spinInnerClass()`.
fn generate_calls(class: &ClassFile<'_>) -> Result<Vec<usize>> {
    let pool = &class.pool;
    let mut calls = Vec::new();
    for m in &class.methods {
        if pool.utf8(m.name_index)? != SPIN || pool.utf8(m.descriptor_index)? != RETURNS_CLASS {
            continue;
        }
        let Some(raw) = class.member_attribute(m, b"Code") else {
            continue;
        };
        let code = crate::attributes::code::CodeAttribute::read(&raw)?;
        for insn in Instructions::new(code.code, code.code_offset) {
            let insn = insn?;
            if insn.opcode != op::INVOKEVIRTUAL && insn.opcode != op::INVOKESPECIAL {
                continue;
            }
            let index = read_u2(code.code, insn.pc as usize + 1);
            let (owner, name, descriptor) = pool.member_ref(index)?;
            if owner == class.name() && name == GENERATE && descriptor == RETURNS_CLASS {
                calls.push(code.code_offset + insn.pc as usize);
            }
        }
    }
    Ok(calls)
}

fn utf8(out: &mut Vec<u8>, text: &str) {
    out.push(tag::UTF8);
    out.extend_from_slice(&(text.len() as u16).to_be_bytes());
    out.extend_from_slice(text.as_bytes());
}
