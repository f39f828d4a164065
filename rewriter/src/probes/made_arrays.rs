//! Calls that return an array the called method did not make in bytecode: an array's `clone()` and
//! `java.lang.reflect.Array.newInstance(Class, int)`. The interpreter makes these arrays in a native, which
//! posts JVMTI's VMObjectAlloc; C2 (and, for `clone`, C1 from JDK 21) makes them in code of its own, which
//! posts nothing and runs no probe. So they are counted where the bytecode asks for them: after the call
//! returns, `dup; invokestatic HeapProxy.arrayMade(Object)`, which counts the array by its class. The agent's
//! VMObjectAlloc callback leaves alone the arrays these two natives make (agent/src/vm_allocations.rs), so
//! each array is counted once whichever code made it.
//!
//! Not covered, and documented in docs/ARCHITECTURE.md ("The probes"): a clone or `newInstance` called
//! through reflection, a method handle or JNI, and an array's clone that a class file names as
//! `java/lang/Object.clone` (the class the call names is then no array type).

use crate::bytecode::opcode as op;
use crate::bytes::read_u2;
use crate::constant_pool::ConstantPool;

const ARRAY_CLASS: &[u8] = b"java/lang/reflect/Array";

/// Whether the instruction (`opcode` with pool index `operand`) calls one of the two methods.
pub fn returns_made_array(pool: &ConstantPool<'_>, opcode: u8, operand: u16) -> bool {
    let Ok((class, name, descriptor)) = pool.member_ref(operand) else {
        return false;
    };
    match opcode {
        op::INVOKEVIRTUAL => {
            class.first() == Some(&b'[')
                && name == b"clone"
                && descriptor == b"()Ljava/lang/Object;"
        }
        op::INVOKESTATIC => {
            class == ARRAY_CLASS
                && name == b"newInstance"
                && descriptor == b"(Ljava/lang/Class;I)Ljava/lang/Object;"
        }
        _ => false,
    }
}

/// The same test on the instruction at `pc` of `code`.
pub fn calls_made_array(pool: &ConstantPool<'_>, code: &[u8], pc: usize) -> bool {
    matches!(code[pc], op::INVOKEVIRTUAL | op::INVOKESTATIC)
        && pc + 2 < code.len()
        && returns_made_array(pool, code[pc], read_u2(code, pc + 1))
}
