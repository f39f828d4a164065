//! Straight-line type simulation, the small part of the verifier the editor needs: given the frame at the
//! start of a basic block, compute the types after any instruction in it. Used only to build the frame
//! a widened conditional branch needs at its fall-through (the rare case), never for ordinary edits.

use std::borrow::Cow;

use crate::attributes::stack_map::{ClassRef, VType};
use crate::bytecode::instructions::{local_index, Instruction};
use crate::bytecode::opcode as op;
use crate::bytes::read_u2;
use crate::constant_pool::{Constant, ConstantPool};
use crate::descriptor::{vtype_of, Params};
use crate::error::{bail, Error, Result};

/// Locals and operand stack one slot/word per entry: a long or double is followed by `Top`.
#[derive(Clone, Debug)]
pub struct State<'a> {
    pub locals: Vec<VType<'a>>,
    pub stack: Vec<VType<'a>>,
}

fn object(name: &[u8]) -> VType<'_> {
    VType::Object(ClassRef {
        name: Cow::Borrowed(name),
        index: 0,
    })
}

fn owned_object<'a>(name: Vec<u8>) -> VType<'a> {
    VType::Object(ClassRef {
        name: Cow::Owned(name),
        index: 0,
    })
}

impl<'a> State<'a> {
    /// Expands frame-form lists (long/double one entry) into slots and words.
    pub fn from_frame(locals: &[VType<'a>], stack: &[VType<'a>]) -> Self {
        let expand = |list: &[VType<'a>]| {
            let mut v = Vec::with_capacity(list.len() + 2);
            for t in list {
                v.push(t.clone());
                if t.is_wide() {
                    v.push(VType::Top);
                }
            }
            v
        };
        State {
            locals: expand(locals),
            stack: expand(stack),
        }
    }

    /// Collapses back to frame form, dropping trailing unusable locals.
    pub fn to_frame(&self) -> (Vec<VType<'a>>, Vec<VType<'a>>) {
        let collapse = |list: &[VType<'a>]| {
            let mut v = Vec::with_capacity(list.len());
            let mut i = 0;
            while i < list.len() {
                v.push(list[i].clone());
                i += if list[i].is_wide() { 2 } else { 1 };
            }
            v
        };
        let mut locals = collapse(&self.locals);
        while locals.last() == Some(&VType::Top) {
            locals.pop();
        }
        (locals, collapse(&self.stack))
    }

    fn pop(&mut self, words: usize, at: usize) -> Result<()> {
        if self.stack.len() < words {
            bail!(at, "operand stack underflow while computing a frame");
        }
        self.stack.truncate(self.stack.len() - words);
        Ok(())
    }

    fn pop1(&mut self, at: usize) -> Result<VType<'a>> {
        match self.stack.pop() {
            Some(t) => Ok(t),
            None => bail!(at, "operand stack underflow while computing a frame"),
        }
    }

    fn push(&mut self, t: VType<'a>) {
        let wide = t.is_wide();
        self.stack.push(t);
        if wide {
            self.stack.push(VType::Top);
        }
    }

    fn push_field_type(&mut self, t: &'a [u8]) {
        if t != b"V" {
            self.push(vtype_of(t));
        }
    }

    fn load(&mut self, index: usize, at: usize) -> Result<()> {
        match self.locals.get(index) {
            Some(t) => {
                let t = t.clone();
                self.push(t);
                Ok(())
            }
            None => bail!(
                at,
                "load from local {index} beyond max_locals while computing a frame"
            ),
        }
    }

    fn store(&mut self, index: usize, at: usize) -> Result<()> {
        let top = self.pop1(at)?;
        let t = if top == VType::Top {
            self.pop1(at)?
        } else {
            top
        };
        let wide = t.is_wide();
        let need = index + if wide { 2 } else { 1 };
        if self.locals.len() < need {
            self.locals.resize(need, VType::Top);
        }
        if index > 0 && self.locals[index - 1].is_wide() {
            self.locals[index - 1] = VType::Top;
        }
        self.locals[index] = t;
        if wide {
            self.locals[index + 1] = VType::Top;
        }
        Ok(())
    }

    /// Replaces an uninitialized type everywhere once its constructor has run.
    fn initialize(&mut self, uninit: &VType<'a>, done: VType<'a>) {
        for t in self.locals.iter_mut().chain(self.stack.iter_mut()) {
            if t == uninit {
                *t = done.clone();
            }
        }
    }
}

/// Class context for the simulation.
pub struct Context<'c, 'a> {
    pub pool: &'c ConstantPool<'a>,
    pub this_class: &'a [u8],
    pub code: &'a [u8],
    pub base: usize,
}

/// Applies one instruction to `s`.
pub fn step<'a>(cx: &Context<'_, 'a>, s: &mut State<'a>, insn: Instruction) -> Result<()> {
    use VType::*;
    let code = cx.code;
    let pc = insn.pc as usize;
    let at = cx.base + pc;
    let u2 = || read_u2(code, pc + 1);
    let opcode = insn.opcode;
    match opcode {
        op::NOP | op::IINC | op::GOTO | op::GOTO_W | op::RETURN => {}
        op::ACONST_NULL => s.push(Null),
        op::ICONST_M1..=op::ICONST_5 | op::BIPUSH | op::SIPUSH => s.push(Integer),
        op::LCONST_0 | op::LCONST_1 => s.push(Long),
        op::FCONST_0..=op::FCONST_2 => s.push(Float),
        op::DCONST_0 | op::DCONST_1 => s.push(Double),
        op::LDC | op::LDC_W | op::LDC2_W => {
            let index = if opcode == op::LDC {
                code[pc + 1] as u16
            } else {
                u2()
            };
            let t = match cx.pool.get(index)? {
                Constant::Integer(_) => Integer,
                Constant::Float(_) => Float,
                Constant::Long(_) => Long,
                Constant::Double(_) => Double,
                Constant::String { .. } => object(b"java/lang/String"),
                Constant::Class { .. } => object(b"java/lang/Class"),
                Constant::MethodType { .. } => object(b"java/lang/invoke/MethodType"),
                Constant::MethodHandle { .. } => object(b"java/lang/invoke/MethodHandle"),
                Constant::Dynamic { .. } => vtype_of(cx.pool.dynamic(index)?.1),
                other => bail!(at, "ldc of {other:?}"),
            };
            s.push(t);
        }
        op::ILOAD..=op::ALOAD | op::ILOAD_0..=op::ALOAD_3 => {
            s.load(local_index(code, insn).unwrap() as usize, at)?
        }
        op::ISTORE..=op::ASTORE | op::ISTORE_0..=op::ASTORE_3 => {
            s.store(local_index(code, insn).unwrap() as usize, at)?
        }
        op::WIDE => {
            let index = local_index(code, insn).unwrap() as usize;
            match code[pc + 1] {
                op::ILOAD..=op::ALOAD => s.load(index, at)?,
                op::ISTORE..=op::ASTORE => s.store(index, at)?,
                _ => {} // iinc; ret does not occur in classes that have frames
            }
        }
        op::IALOAD | op::BALOAD | op::CALOAD | op::SALOAD => {
            s.pop(2, at)?;
            s.push(Integer);
        }
        op::LALOAD => {
            s.pop(2, at)?;
            s.push(Long);
        }
        op::FALOAD => {
            s.pop(2, at)?;
            s.push(Float);
        }
        op::DALOAD => {
            s.pop(2, at)?;
            s.push(Double);
        }
        op::AALOAD => {
            s.pop(1, at)?;
            let array = s.pop1(at)?;
            let element = match array {
                Object(ClassRef {
                    name: Cow::Borrowed(n),
                    ..
                }) if n.len() > 1 && n[0] == b'[' => vtype_of(&n[1..]),
                Object(ClassRef {
                    name: Cow::Owned(n),
                    ..
                }) if n.len() > 1 && n[0] == b'[' => {
                    let inner = &n[1..];
                    match inner[0] {
                        b'L' => owned_object(inner[1..inner.len() - 1].to_vec()),
                        b'[' => owned_object(inner.to_vec()),
                        _ => vtype_of(match inner[0] {
                            b'J' => b"J",
                            b'D' => b"D",
                            b'F' => b"F",
                            _ => b"I",
                        }),
                    }
                }
                _ => Null,
            };
            s.push(element);
        }
        op::IASTORE | op::FASTORE | op::AASTORE | op::BASTORE | op::CASTORE | op::SASTORE => {
            s.pop(3, at)?
        }
        op::LASTORE | op::DASTORE => s.pop(4, at)?,
        op::POP => s.pop(1, at)?,
        op::POP2 => s.pop(2, at)?,
        op::DUP..=op::SWAP => shuffle(s, opcode, at)?,
        op::IADD
        | op::ISUB
        | op::IMUL
        | op::IDIV
        | op::IREM
        | op::ISHL
        | op::ISHR
        | op::IUSHR
        | op::IAND
        | op::IOR
        | op::IXOR => {
            s.pop(2, at)?;
            s.push(Integer);
        }
        op::LADD | op::LSUB | op::LMUL | op::LDIV | op::LREM | op::LAND | op::LOR | op::LXOR => {
            s.pop(4, at)?;
            s.push(Long);
        }
        op::LSHL | op::LSHR | op::LUSHR => {
            s.pop(3, at)?;
            s.push(Long);
        }
        op::FADD | op::FSUB | op::FMUL | op::FDIV | op::FREM => {
            s.pop(2, at)?;
            s.push(Float);
        }
        op::DADD | op::DSUB | op::DMUL | op::DDIV | op::DREM => {
            s.pop(4, at)?;
            s.push(Double);
        }
        op::INEG | op::FNEG | op::LNEG | op::DNEG => {}
        op::I2L
        | op::I2F
        | op::I2D
        | op::L2I
        | op::L2F
        | op::L2D
        | op::F2I
        | op::F2L
        | op::F2D
        | op::D2I
        | op::D2L
        | op::D2F
        | op::I2B
        | op::I2C
        | op::I2S => {
            let (words, result) = match opcode {
                op::I2L => (1, Long),
                op::I2F => (1, Float),
                op::I2D => (1, Double),
                op::L2I => (2, Integer),
                op::L2F => (2, Float),
                op::L2D => (2, Double),
                op::F2I => (1, Integer),
                op::F2L => (1, Long),
                op::F2D => (1, Double),
                op::D2I => (2, Integer),
                op::D2L => (2, Long),
                op::D2F => (2, Float),
                _ => (1, Integer),
            };
            s.pop(words, at)?;
            s.push(result);
        }
        op::LCMP | op::DCMPL | op::DCMPG => {
            s.pop(4, at)?;
            s.push(Integer);
        }
        op::FCMPL | op::FCMPG => {
            s.pop(2, at)?;
            s.push(Integer);
        }
        op::IFEQ..=op::IFLE | op::IFNULL | op::IFNONNULL | op::TABLESWITCH | op::LOOKUPSWITCH => {
            s.pop(1, at)?
        }
        op::IF_ICMPEQ..=op::IF_ACMPNE => s.pop(2, at)?,
        op::GETSTATIC => s.push_field_type(cx.pool.member_ref(u2())?.2),
        op::PUTSTATIC => {
            let t = cx.pool.member_ref(u2())?.2;
            s.pop(if matches!(t, b"J" | b"D") { 2 } else { 1 }, at)?;
        }
        op::GETFIELD => {
            s.pop(1, at)?;
            s.push_field_type(cx.pool.member_ref(u2())?.2);
        }
        op::PUTFIELD => {
            let t = cx.pool.member_ref(u2())?.2;
            s.pop(if matches!(t, b"J" | b"D") { 3 } else { 2 }, at)?;
        }
        op::INVOKEVIRTUAL
        | op::INVOKESPECIAL
        | op::INVOKESTATIC
        | op::INVOKEINTERFACE
        | op::INVOKEDYNAMIC => {
            let (name, descriptor) = if opcode == op::INVOKEDYNAMIC {
                let (n, d) = cx.pool.dynamic(u2())?;
                (n, d)
            } else {
                let (_, n, d) = cx.pool.member_ref(u2())?;
                (n, d)
            };
            s.pop(crate::descriptor::argument_slots(descriptor)? as usize, at)?;
            if opcode != op::INVOKESTATIC && opcode != op::INVOKEDYNAMIC {
                let receiver = s.pop1(at)?;
                if opcode == op::INVOKESPECIAL && name == b"<init>" {
                    let done = match &receiver {
                        UninitializedThis => object(cx.this_class),
                        Uninitialized(new_pc) => {
                            let class = read_u2(code, *new_pc as usize + 1);
                            object(cx.pool.class_name(class)?)
                        }
                        _ => receiver.clone(),
                    };
                    s.initialize(&receiver, done);
                }
            }
            s.push_field_type(Params::new(descriptor)?.return_type()?);
        }
        op::NEW => s.push(Uninitialized(insn.pc as u16)),
        op::NEWARRAY => {
            s.pop(1, at)?;
            let Some(name) = op::newarray_descriptor(code[pc + 1]) else {
                bail!(at, "newarray with invalid type {}", code[pc + 1]);
            };
            s.push(object(name));
        }
        op::ANEWARRAY => {
            s.pop(1, at)?;
            let element = cx.pool.class_name(u2())?;
            let mut name = Vec::with_capacity(element.len() + 3);
            name.push(b'[');
            if element.first() == Some(&b'[') {
                name.extend_from_slice(element);
            } else {
                name.push(b'L');
                name.extend_from_slice(element);
                name.push(b';');
            }
            s.push(owned_object(name));
        }
        op::MULTIANEWARRAY => {
            s.pop(code[pc + 3] as usize, at)?;
            s.push(object(cx.pool.class_name(u2())?));
        }
        op::ARRAYLENGTH | op::INSTANCEOF => {
            s.pop(1, at)?;
            s.push(Integer);
        }
        op::CHECKCAST => {
            s.pop(1, at)?;
            s.push(object(cx.pool.class_name(u2())?));
        }
        op::MONITORENTER | op::MONITOREXIT => s.pop(1, at)?,
        _ => {
            return Err(Error::unsupported(format!(
                "cannot compute a frame across {} at pc {pc}",
                op::name(opcode)
            )))
        }
    }
    Ok(())
}

/// dup, dup_x1, dup_x2, dup2, dup2_x1, dup2_x2 and swap, on words.
fn shuffle(s: &mut State<'_>, opcode: u8, at: usize) -> Result<()> {
    let (take, copy, insert_below): (usize, usize, usize) = match opcode {
        op::DUP => (1, 1, 0),
        op::DUP_X1 => (2, 1, 1),
        op::DUP_X2 => (3, 1, 2),
        op::DUP2 => (2, 2, 0),
        op::DUP2_X1 => (3, 2, 1),
        op::DUP2_X2 => (4, 2, 2),
        _ => {
            let n = s.stack.len();
            if n < 2 {
                bail!(at, "operand stack underflow while computing a frame");
            }
            s.stack.swap(n - 1, n - 2);
            return Ok(());
        }
    };
    let n = s.stack.len();
    if n < take {
        bail!(at, "operand stack underflow while computing a frame");
    }
    let top: Vec<_> = s.stack[n - copy..].to_vec();
    let pos = n - copy - insert_below;
    for (k, t) in top.into_iter().enumerate() {
        s.stack.insert(pos + k, t);
    }
    Ok(())
}
