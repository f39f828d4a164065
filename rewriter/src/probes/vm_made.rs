//! Calls that return an array or object the called method did not make in bytecode: an array's `clone()`,
//! `java.lang.reflect.Array.newInstance(Class, int)` and `super.clone()` straight into `Object.clone`. The
//! interpreter makes these in a native, which posts JVMTI's VMObjectAlloc; C2 (and, for an array's clone,
//! C1 from JDK 21) makes them in code of its own, which posts nothing and runs no probe. So they are counted
//! where the bytecode asks for them: after the call returns, `dup; invokestatic HeapProxy.arrayMade(Object)`
//! for an array, `dup; invokestatic HeapProxy.objectAlloc(Object)` (what `Object.<init>` calls) for an
//! object, each by class. The agent's VMObjectAlloc callback leaves these natives' objects alone when the
//! call was one of these (agent/src/vm_allocations.rs), so each is counted once whichever code made it.
//!
//! Only `invokespecial java/lang/Object.clone` is certain to reach `Object.clone` without an override in
//! between. It is what javac writes for every `super.clone()` that no superclass overrides, as it names
//! `Object` for any of `Object`'s members; a call that names a superclass reaches that superclass's own
//! `clone()`, which counts the clone itself. Not covered, and documented in docs/ARCHITECTURE.md ("The
//! probes"): a call from another compiler that names a superclass without a `clone()`, under C2; the
//! calls made through reflection, a method handle or JNI; and an array's clone that a class file names as
//! `java/lang/Object.clone`.

use crate::bytecode::opcode as op;
use crate::bytes::read_u2;
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
            if class == b"java/lang/Object" && name == CLONE && descriptor == CLONE_DESCRIPTOR =>
        {
            Some(Made::Object)
        }
        _ => None,
    }
}
