//! Calls that return an array or object the called method did not make in bytecode: an array's `clone()`,
//! `java.lang.reflect.Array.newInstance(Class, int)` and `super.clone()` when it reaches `Object.clone`. The
//! interpreter makes these in a native, which posts JVMTI's VMObjectAlloc; C2 (and, for an array's clone,
//! C1 from JDK 21) makes them in code of its own, which posts nothing and runs no probe. So they are counted
//! where the bytecode asks for them: after the call returns, `dup; invokestatic HeapProxy.arrayMade(Object)`
//! for an array, `dup; invokestatic HeapProxy.objectAlloc(Object)` (what `Object.<init>` calls) for an
//! object, each by class. The agent's VMObjectAlloc callback leaves these natives' objects alone when the
//! call was one of these (agent/src/vm_allocations.rs), so each is counted once whichever code made it.
//!
//! `super.clone()` is an `invokespecial` of `clone()` naming the superclass or `Object`, and the JVM looks
//! for the method it runs from the calling class's direct superclass up (JVMS 6.5, invokespecial). Where that
//! superclass is `Object`, the call reaches `Object.clone` and the probe counts by class ([`CloneCall::Object`]).
//! Otherwise only the run time knows whether a class between declares a `clone()` that counts its clone
//! itself: javac names `Object` for every `super.clone()` no superclass overrides *when it compiles*, and
//! the superclass may have gained or lost one since (separate compilation), or another compiler may have
//! named the superclass. Such a call gets `dup; push method; ldc Super; invokestatic
//! HeapProxy.superCloned(Object, int, Class)`, which decides once per method ([`CloneCall::FromSuper`]).
//! Not covered, and documented in docs/ARCHITECTURE.md ("The probes"): the calls made through reflection, a
//! method handle or JNI; an array's clone that a class file names as `java/lang/Object.clone`; and
//! `super.clone()` under C2 in class files older than version 49, which cannot `ldc` a class.

use crate::bytecode::opcode as op;
use crate::bytes::read_u2;
use crate::classfile::ClassFile;
use crate::constant_pool::{Constant, ConstantPool};

/// What a call returns that the VM made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Made {
    Array,
    Object,
}

const CLONE: &[u8] = b"clone";
const CLONE_DESCRIPTOR: &[u8] = b"()Ljava/lang/Object;";

/// What the call at `pc` of `code` returns that the VM made, if it is one of these calls.
pub fn made_by_call(pool: &ConstantPool<'_>, code: &[u8], pc: usize) -> Option<Made> {
    let opcode = code[pc];
    if !matches!(
        opcode,
        op::INVOKEVIRTUAL | op::INVOKESPECIAL | op::INVOKESTATIC
    ) || pc + 2 >= code.len()
    {
        return None;
    }
    // The name first: it turns away almost every call with one lookup less than the whole reference.
    let (Ok(Constant::Methodref {
        class,
        name_and_type,
    })
    | Ok(Constant::InterfaceMethodref {
        class,
        name_and_type,
    })) = pool.get(read_u2(code, pc + 1))
    else {
        return None;
    };
    let Ok(Constant::NameAndType { name, descriptor }) = pool.get(name_and_type) else {
        return None;
    };
    let name = pool.utf8(name).ok()?;
    if name != CLONE && name != b"newInstance" {
        return None;
    }
    let (class, descriptor) = (pool.class_name(class).ok()?, pool.utf8(descriptor).ok()?);
    match opcode {
        op::INVOKEVIRTUAL
            if class.first() == Some(&b'[') && name == CLONE && descriptor == CLONE_DESCRIPTOR =>
        {
            Some(Made::Array)
        }
        op::INVOKESTATIC
            if class == b"java/lang/reflect/Array"
                && name == b"newInstance"
                && descriptor == b"(Ljava/lang/Class;I)Ljava/lang/Object;" =>
        {
            Some(Made::Array)
        }
        op::INVOKESPECIAL
            if class.first() != Some(&b'[') && name == CLONE && descriptor == CLONE_DESCRIPTOR =>
        {
            Some(Made::Object)
        }
        _ => None,
    }
}

/// Where the `clone()` that an `invokespecial` in `class` names is looked for, and so how its object is counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CloneCall {
    /// The class's superclass is `Object`: the call reaches `Object.clone`, counted after it by class.
    Object,
    /// The search starts at the superclass, whose Class constant is at this pool index: counted after the
    /// call if, at run time, no class from there up declares `clone()`.
    FromSuper(u16),
    /// Not counted here: the class's own `clone()`, which counts for itself, or a class file too old to
    /// `ldc` a class.
    Elsewhere,
}

/// How `invokespecial owner.clone()` in `class` is counted (`owner` is the call's class name).
pub fn clone_call(class: &ClassFile<'_>, owner: &[u8]) -> CloneCall {
    let own = owner == class.name()
        && class.methods.iter().any(|m| {
            m.access & crate::classfile::access::STATIC == 0
                && class.pool.utf8(m.name_index).ok() == Some(CLONE)
                && class.pool.utf8(m.descriptor_index).ok() == Some(CLONE_DESCRIPTOR)
        });
    match class.pool.class_name(class.super_class) {
        _ if own => CloneCall::Elsewhere,
        Ok(b"java/lang/Object") => CloneCall::Object,
        // `ldc` of a Class constant is valid from version 49 on.
        Ok(_) if class.major_version >= 49 => CloneCall::FromSuper(class.super_class),
        _ => CloneCall::Elsewhere,
    }
}
