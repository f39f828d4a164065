//! The deepest operand stack a method's own code reaches, counted the way HotSpot's type-checking verifier
//! counts it (long and double take two words).
//!
//! Why: an edit raises `max_stack` by what its snippets need. If the original `max_stack` was already too
//! small, HotSpot would reject the class ("Operand stack overflow"), but the raised value could hide that and
//! let the class run. So when `max_stack` is raised, the original must be at least this depth, or the class is
//! malformed and stays as it was.
//!
//! A linear pass: the depth after an instruction is the depth before it plus its effect, and every
//! StackMapTable frame sets the depth to its own stack. That is exactly the verifier's walk for code that
//! verifies (after a jump or a return the next instruction must have a frame); for code that does not, the
//! verifier fails anyway and the estimate only decides whether the class is left as it was.

use crate::bytecode::instructions::Instruction;
use crate::bytecode::opcode as op;
use crate::bytes::{read_u2, Cursor};
use crate::constant_pool::ConstantPool;
use crate::error::{bail, Result};

/// Marks, in [`EFFECT`], the opcodes whose effect depends on their operand (field access, invokes,
/// `multianewarray`, `wide`), and those after which control does not fall through.
const BY_OPERAND: u8 = 0x80;
const ENDS_FLOW: u8 = 0x40;

/// Per opcode: words popped (bits 0-2) and pushed (bits 3-5), or [`BY_OPERAND`]; and [`ENDS_FLOW`]. The
/// instruction set's effects written once; the walk reads them unpacked, from [`STEP`].
const EFFECT: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut o = 0;
    while o < 256 {
        let (pops, pushes): (u8, u8) = match o as u8 {
            op::ACONST_NULL..=op::ICONST_5 | op::FCONST_0..=op::FCONST_2 => (0, 1),
            op::LCONST_0 | op::LCONST_1 | op::DCONST_0 | op::DCONST_1 => (0, 2),
            op::BIPUSH | op::SIPUSH | op::LDC | op::LDC_W => (0, 1),
            op::LDC2_W => (0, 2),
            op::ILOAD | op::FLOAD | op::ALOAD => (0, 1),
            op::LLOAD | op::DLOAD => (0, 2),
            op::ILOAD_0..=op::ALOAD_3 => {
                // iload_n, lload_n, fload_n, dload_n, aload_n: four of each.
                let kind = (o as u8 - op::ILOAD_0) / 4;
                if kind == 1 || kind == 3 {
                    (0, 2)
                } else {
                    (0, 1)
                }
            }
            op::LALOAD | op::DALOAD => (2, 2),
            op::IALOAD..=op::SALOAD => (2, 1),
            op::ISTORE | op::FSTORE | op::ASTORE => (1, 0),
            op::LSTORE | op::DSTORE => (2, 0),
            op::ISTORE_0..=op::ASTORE_3 => {
                let kind = (o as u8 - op::ISTORE_0) / 4;
                if kind == 1 || kind == 3 {
                    (2, 0)
                } else {
                    (1, 0)
                }
            }
            op::LASTORE | op::DASTORE => (4, 0),
            op::IASTORE..=op::SASTORE => (3, 0),
            op::POP => (1, 0),
            op::POP2 => (2, 0),
            op::DUP => (1, 2),
            op::DUP_X1 => (2, 3),
            op::DUP_X2 => (3, 4),
            op::DUP2 => (2, 4),
            op::DUP2_X1 => (3, 5),
            op::DUP2_X2 => (4, 6),
            op::SWAP => (2, 2),
            op::IADD..=op::DREM => {
                // add, sub, mul, div, rem, each as i, l, f, d.
                if (o as u8 - op::IADD) % 2 == 1 {
                    (4, 2)
                } else {
                    (2, 1)
                }
            }
            op::INEG | op::FNEG => (1, 1),
            op::LNEG | op::DNEG => (2, 2),
            op::ISHL | op::ISHR | op::IUSHR => (2, 1),
            op::LSHL | op::LSHR | op::LUSHR => (3, 2),
            op::IAND | op::IOR | op::IXOR => (2, 1),
            op::LAND | op::LOR | op::LXOR => (4, 2),
            op::I2L | op::I2D | op::F2L | op::F2D => (1, 2),
            op::I2F | op::F2I | op::I2B | op::I2C | op::I2S => (1, 1),
            op::L2I | op::L2F | op::D2I | op::D2F => (2, 1),
            op::L2D | op::D2L => (2, 2),
            op::LCMP | op::DCMPL | op::DCMPG => (4, 1),
            op::FCMPL | op::FCMPG => (2, 1),
            op::IFEQ..=op::IFLE | op::IFNULL | op::IFNONNULL => (1, 0),
            op::IF_ICMPEQ..=op::IF_ACMPNE => (2, 0),
            op::JSR | op::JSR_W => (0, 1),
            op::TABLESWITCH | op::LOOKUPSWITCH => (1, 0),
            op::IRETURN | op::FRETURN | op::ARETURN => (1, 0),
            op::LRETURN | op::DRETURN => (2, 0),
            op::NEW => (0, 1),
            op::NEWARRAY | op::ANEWARRAY | op::ARRAYLENGTH => (1, 1),
            op::CHECKCAST | op::INSTANCEOF => (1, 1),
            op::ATHROW | op::MONITORENTER | op::MONITOREXIT => (1, 0),
            _ => (0, 0),
        };
        t[o] = pops | pushes << 3;
        let b = o as u8;
        if (b >= op::GETSTATIC && b <= op::INVOKEDYNAMIC)
            || b == op::MULTIANEWARRAY
            || b == op::WIDE
        {
            t[o] = BY_OPERAND;
        }
        if matches!(
            b,
            op::GOTO | op::GOTO_W | op::ATHROW | op::RET | op::TABLESWITCH | op::LOOKUPSWITCH
        ) || (b >= op::IRETURN && b <= op::RETURN)
        {
            t[o] |= ENDS_FLOW;
        }
        o += 1;
    }
    t
};

/// [`EFFECT`] unpacked for the walk's inner loop, so that the depth after an instruction is one compare
/// and one add away from the depth before it. 16 bytes, so that finding an opcode's entry is a shift.
#[derive(Clone, Copy)]
#[repr(align(16))]
struct Step {
    pops: u32,
    pushes: u16,
    /// The effect depends on the operand ([`BY_OPERAND`]).
    slow: bool,
    /// `pushes - pops`, wrapping.
    net: u32,
    /// For field accesses and invokes: how [`DescriptorWords`] reads the operand ([`MEMBER_FIELD`] or
    /// [`MEMBER_METHOD`], 0 for the other slow ones), and whether the instruction pops (in addition to
    /// `pops`, the receiver) and pushes its words: 0 or 1, turned into masks so that no opcode needs a
    /// branch of its own.
    member: u8,
    pops_mask: u8,
    pushes_mask: u8,
}

/// [`Step::member`] values, the high byte of the kind bits.
const MEMBER_FIELD: u8 = (FIELD >> 24) as u8;
const MEMBER_METHOD: u8 = (METHOD >> 24) as u8;

/// After an instruction that ends the flow the depth is 0 (what follows is reached by a jump, so a frame
/// must say its depth). Such instructions push nothing, so the depth they leave before that reset never
/// exceeds the depth before them, already counted: they are given more pops than any depth can reach
/// (at most 6 words more per instruction), and so leave their `pushes`, 0.
const STEP: [Step; 256] = {
    let mut t = [Step {
        pops: 0,
        pushes: 0,
        net: 0,
        slow: false,
        member: 0,
        pops_mask: 0,
        pushes_mask: 0,
    }; 256];
    let mut o = 0;
    while o < 256 {
        let e = EFFECT[o];
        if e & BY_OPERAND != 0 {
            t[o].slow = true;
            let b = o as u8;
            // (kind, receiver, pops the value or arguments, pushes the value or result)
            let (member, receiver, pops, pushes) = match b {
                op::GETSTATIC => (MEMBER_FIELD, 0, false, true),
                op::PUTSTATIC => (MEMBER_FIELD, 0, true, false),
                op::GETFIELD => (MEMBER_FIELD, 1, false, true),
                op::PUTFIELD => (MEMBER_FIELD, 1, true, false),
                op::INVOKESTATIC | op::INVOKEDYNAMIC => (MEMBER_METHOD, 0, true, true),
                op::INVOKEVIRTUAL | op::INVOKESPECIAL | op::INVOKEINTERFACE => {
                    (MEMBER_METHOD, 1, true, true)
                }
                _ => (0, 0, false, false),
            };
            t[o].member = member;
            t[o].pops = receiver;
            t[o].pops_mask = pops as u8;
            t[o].pushes_mask = pushes as u8;
        } else if e & ENDS_FLOW != 0 {
            t[o].pops = u32::MAX;
        } else {
            let (pops, pushes) = ((e & 0x07) as u32, (e >> 3 & 0x07) as u32);
            t[o] = Step {
                pops,
                pushes: pushes as u16,
                net: pushes.wrapping_sub(pops),
                slow: false,
                member: 0,
                pops_mask: 0,
                pushes_mask: 0,
            };
        }
        o += 1;
    }
    t
};

fn words(t: u8) -> u32 {
    match t {
        b'V' => 0,
        b'J' | b'D' => 2,
        _ => 1,
    }
}

/// Words taken by a field descriptor's value.
fn field_words(descriptor: &[u8]) -> u32 {
    descriptor.first().map_or(1, |&t| words(t))
}

/// Words of a method descriptor's arguments and of its result, in one scan.
fn method_words(descriptor: &[u8]) -> Result<(u32, u32)> {
    let mut args = 0;
    let mut i = 1;
    while let Some(&t) = descriptor.get(i) {
        match t {
            b')' => {
                return match descriptor.get(i + 1) {
                    Some(&r) => Ok((args, words(r))),
                    None => bail!(0, "method descriptor without a return type"),
                };
            }
            b'[' => {
                while descriptor.get(i) == Some(&b'[') {
                    i += 1;
                }
                if descriptor.get(i) == Some(&b'L') {
                    i += descriptor[i..]
                        .iter()
                        .position(|&c| c == b';')
                        .unwrap_or(descriptor.len());
                }
                args += 1;
            }
            b'L' => {
                i += descriptor[i..]
                    .iter()
                    .position(|&c| c == b';')
                    .unwrap_or(descriptor.len());
                args += 1;
            }
            _ => args += words(t),
        }
        i += 1;
    }
    bail!(0, "method descriptor without ')'")
}

/// The words moved by the descriptors of the member references a class's code names, by pool index, kept
/// from method to method of one class: the probes edit every method, the methods of a class call the same
/// methods and read the same fields, and looking a descriptor up (three pool entries) and scanning it was a
/// third of the walk's cost. Keyed by the interpretation too: the same index read as a field and as a
/// method (malformed code can do that) gives two different answers, and only one is kept.
#[derive(Debug, Default)]
pub struct DescriptorWords {
    /// Per pool index: 0 when not yet known; else [`FIELD`] or [`METHOD`] (for a member reference; shifted
    /// by [`BY_DESCRIPTOR`] for a descriptor) | the arguments' words (a field's value) | the result's
    /// words (again a field's value) << [`RESULT_SHIFT`]. Empty until the class's first lookup.
    by_index: Vec<u32>,
}

const FIELD: u32 = 1 << 31;
const METHOD: u32 = 1 << 30;
/// Entries keyed by a descriptor's Utf8 index have their kind bit this much lower.
const BY_DESCRIPTOR: u32 = 2;
/// Arguments take at most 2 x 65535 words (a descriptor is at most 65535 bytes): below this bit.
const RESULT_SHIFT: u32 = 24;
const ARGS: u32 = (1 << RESULT_SHIFT) - 1;

impl DescriptorWords {
    /// Forgets the previous class's entries (pool indexes mean something else in the next class).
    pub fn reset(&mut self) {
        self.by_index.clear();
    }

    /// The entry for `index` read as `kind` ([`FIELD`] or [`METHOD`]). A field's entry holds its words
    /// both as "arguments" and as "result", so that one formula serves every opcode.
    #[inline]
    fn get(&mut self, pool: &ConstantPool<'_>, index: u16, kind: u32) -> Result<u32> {
        match self.by_index.get(index as usize) {
            Some(&e) if e & kind != 0 => Ok(e),
            _ => self.read(pool, index, kind),
        }
    }

    /// A member reference met for the first time in this class: its descriptor's words, remembered under
    /// the reference and under the descriptor (many references share a descriptor, `()V` above all).
    /// Descriptor entries carry their kind shifted by [`BY_DESCRIPTOR`], so that [`Self::get`] never takes
    /// one for a reference's (a Utf8 index named by an instruction stays an error).
    #[inline(never)]
    fn read(&mut self, pool: &ConstantPool<'_>, index: u16, kind: u32) -> Result<u32> {
        if self.by_index.is_empty() {
            self.by_index.resize(pool.count() as usize, 0);
        }
        let d = pool.reference_descriptor_index(index)?;
        let by_descriptor = kind >> BY_DESCRIPTOR;
        let words = match self.by_index.get(d as usize) {
            Some(&e) if e & by_descriptor != 0 => e & (ARGS | 0x3 << RESULT_SHIFT),
            _ => {
                let descriptor = pool.utf8(d)?;
                let words = if kind == FIELD {
                    let w = field_words(descriptor);
                    w | w << RESULT_SHIFT
                } else {
                    let (args, result) = method_words(descriptor)?;
                    args | result << RESULT_SHIFT
                };
                remember(&mut self.by_index, d, by_descriptor | words);
                words
            }
        };
        remember(&mut self.by_index, index, kind | words);
        Ok(kind | words)
    }
}

/// Another interpretation of the same index is not overwritten: that one only stays uncached.
fn remember(by_index: &mut [u32], index: u16, entry: u32) {
    if let Some(slot) = by_index.get_mut(index as usize) {
        if *slot == 0 {
            *slot = entry;
        }
    }
}

/// The deepest stack `insns` reach, given the method's StackMapTable body (`None` when it has none).
/// `words` remembers descriptors for the other methods of the same class.
pub fn max_depth(
    code: &[u8],
    insns: &[Instruction],
    pool: &ConstantPool<'_>,
    stack_map: Option<(&[u8], usize)>,
    words: &mut DescriptorWords,
) -> Result<u32> {
    let mut frames = match stack_map {
        Some((data, base)) => FrameStacks::new(data, base)?,
        None => FrameStacks::new(&[0, 0], 0)?,
    };
    let mut next_frame = frames.next()?;
    // The offset of the next frame, u32::MAX when there is none: one comparison per instruction.
    let mut frame_at = next_frame.map_or(u32::MAX, |f| f.0);
    let mut depth: u32 = 0;
    let mut deepest: u32 = 0;
    for insn in insns {
        if insn.pc >= frame_at {
            while let Some((at, stack)) = next_frame {
                if at > insn.pc {
                    break;
                }
                if at == insn.pc {
                    depth = stack;
                    deepest = deepest.max(depth);
                }
                next_frame = frames.next()?;
            }
            frame_at = next_frame.map_or(u32::MAX, |f| f.0);
        }
        let step = &STEP[insn.opcode as usize];
        depth = if !step.slow {
            if depth >= step.pops {
                depth.wrapping_add(step.net)
            } else {
                step.pushes as u32
            }
        } else {
            let (pops, pushes) = if step.member != 0 {
                let kind = (step.member as u32) << 24;
                let e = words.get(pool, read_u2(code, insn.pc as usize + 1), kind)?;
                // A mask of all ones where the instruction uses the words, of zeros where not.
                let pops_mask = 0u32.wrapping_sub(step.pops_mask as u32);
                let pushes_mask = 0u32.wrapping_sub(step.pushes_mask as u32);
                (
                    step.pops + (e & ARGS & pops_mask),
                    e >> RESULT_SHIFT & 0x3 & pushes_mask,
                )
            } else {
                other_by_operand(code, insn)
            };
            depth.saturating_sub(pops) + pushes
        };
        deepest = deepest.max(depth);
    }
    Ok(deepest)
}

/// (words popped, words pushed) of `multianewarray` and `wide`, the instructions whose effect depends
/// on their operand but not on the pool.
fn other_by_operand(code: &[u8], insn: &Instruction) -> (u32, u32) {
    let pc = insn.pc as usize;
    match insn.opcode {
        op::MULTIANEWARRAY => (code[pc + 3] as u32, 1),
        op::WIDE => match code[pc + 1] {
            op::ILOAD | op::FLOAD | op::ALOAD => (0, 1),
            op::LLOAD | op::DLOAD => (0, 2),
            op::ISTORE | op::FSTORE | op::ASTORE => (1, 0),
            op::LSTORE | op::DSTORE => (2, 0),
            _ => (0, 0),
        },
        _ => (0, 0),
    }
}

/// The offset and stack depth (in words) of each StackMapTable frame, in order, decoded one at a time.
struct FrameStacks<'a> {
    c: Cursor<'a>,
    left: u16,
    next_offset: i64,
}

impl<'a> FrameStacks<'a> {
    fn new(data: &'a [u8], base: usize) -> Result<Self> {
        let mut c = Cursor::at(data, base);
        let left = c.u2()?;
        Ok(FrameStacks {
            c,
            left,
            next_offset: 0,
        })
    }

    fn next(&mut self) -> Result<Option<(u32, u32)>> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        let c = &mut self.c;
        let at = c.offset();
        let t = c.u1()?;
        let (delta, stack) = match t {
            0..=63 => (t as u32, 0),
            64..=127 => (t as u32 - 64, self.types(1)?),
            247 => {
                let d = self.c.u2()? as u32;
                (d, self.types(1)?)
            }
            248..=251 => (c.u2()? as u32, 0),
            252..=254 => {
                let d = c.u2()? as u32;
                self.types((t - 251) as u16)?;
                (d, 0)
            }
            255 => {
                let d = c.u2()? as u32;
                let locals = c.u2()?;
                self.types(locals)?;
                let n = self.c.u2()?;
                (d, self.types(n)?)
            }
            _ => bail!(at, "invalid stack map frame type {t}"),
        };
        let offset = self.next_offset + delta as i64;
        self.next_offset = offset + 1;
        Ok(Some((offset as u32, stack)))
    }

    /// Skips `n` verification types and returns the words they take.
    fn types(&mut self, n: u16) -> Result<u32> {
        let mut w = 0;
        for _ in 0..n {
            let at = self.c.offset();
            w += match self.c.u1()? {
                3 | 4 => 2,
                0..=6 => 1,
                7 | 8 => {
                    self.c.skip(2)?;
                    1
                }
                t => bail!(at, "invalid verification type tag {t} in StackMapTable"),
            };
        }
        Ok(w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bytecode::instructions::Instructions;

    #[test]
    fn the_packed_table_holds_the_widest_effects() {
        let e = EFFECT[op::DUP2_X2 as usize];
        assert_eq!((e & 0x07, e >> 3 & 0x07), (4, 6));
        assert_eq!(EFFECT[op::LASTORE as usize] & 0x07, 4);
        assert_ne!(EFFECT[op::LRETURN as usize] & ENDS_FLOW, 0);
        assert_ne!(EFFECT[op::INVOKEDYNAMIC as usize] & BY_OPERAND, 0);
        assert_eq!(EFFECT[op::IINC as usize], 0);
        // dup2_x2 from a depth of 4: 6; from 1 (too few words): what it pushes.
        let s = STEP[op::DUP2_X2 as usize];
        assert_eq!((s.pops, s.pushes, s.net as i32), (4, 6, 2));
        let s = STEP[op::POP2 as usize];
        assert_eq!((s.pops, s.pushes, s.net as i32), (2, 0, -2));
        assert_eq!(std::mem::size_of::<Step>(), 16);
        let s = STEP[op::LRETURN as usize];
        assert_eq!((s.pops, s.pushes), (u32::MAX, 0));
        assert!(STEP[op::GETFIELD as usize].slow);
    }

    #[test]
    fn descriptors_count_long_and_double_twice() {
        assert_eq!(
            method_words(b"(IJ[JLjava/lang/String;[[Ljava/lang/Object;D)J").unwrap(),
            (8, 2)
        );
        assert_eq!(method_words(b"()V").unwrap(), (0, 0));
        assert!(method_words(b"(Ljava/lang/String").is_err());
    }

    #[test]
    fn depth_follows_the_code_and_restarts_at_frames() {
        // 0: lconst_1; 1: dup2; 2: pop2; 3: pop2; 4: goto 10; 7: iconst_0; 8: pop; 9: return;
        // 10: aconst_null; 11: athrow
        let code = [
            op::LCONST_1,
            op::DUP2,
            op::POP2,
            op::POP2,
            op::GOTO,
            0,
            6,
            op::ICONST_0,
            op::POP,
            op::RETURN,
            op::ACONST_NULL,
            op::ATHROW,
        ];
        let insns: Vec<_> = Instructions::new(&code, 0).map(|i| i.unwrap()).collect();
        let pool_bytes = [0u8, 1];
        let pool = ConstantPool::read_alone(&pool_bytes).unwrap();
        assert_eq!(
            max_depth(&code, &insns, &pool, None, &mut DescriptorWords::default()).unwrap(),
            4
        );
        // A full_frame at 7 with a long and an int on the stack: 3 words, 4 after iconst_0.
        let frames = [0, 1, 255, 0, 7, 0, 0, 0, 2, 4, 1];
        assert_eq!(
            max_depth(
                &code,
                &insns,
                &pool,
                Some((&frames, 0)),
                &mut DescriptorWords::default()
            )
            .unwrap(),
            4
        );
        let frames = [0, 1, 255, 0, 7, 0, 0, 0, 3, 4, 4, 1];
        assert_eq!(
            max_depth(
                &code,
                &insns,
                &pool,
                Some((&frames, 0)),
                &mut DescriptorWords::default()
            )
            .unwrap(),
            6
        );
    }

    #[test]
    fn remembered_descriptors_keep_each_interpretation_apart() {
        // #1 "x", #2 "(JI)J", #3 NameAndType x:(JI)J, #4 Class x, #5 Methodref, #6 "D",
        // #7 NameAndType x:D, #8 Fieldref.
        let mut pool_bytes = vec![0u8, 9];
        pool_bytes.extend_from_slice(&[1, 0, 1, b'x']);
        pool_bytes.extend_from_slice(&[1, 0, 5, b'(', b'J', b'I', b')', b'J']);
        pool_bytes.extend_from_slice(&[12, 0, 1, 0, 2, 7, 0, 1, 10, 0, 4, 0, 3]);
        pool_bytes.extend_from_slice(&[1, 0, 1, b'D', 12, 0, 1, 0, 6, 9, 0, 4, 0, 7]);
        let pool = ConstantPool::read_alone(&pool_bytes).unwrap();
        let depth = |code: &[u8], words: &mut DescriptorWords| {
            let insns: Vec<_> = Instructions::new(code, 0).map(|i| i.unwrap()).collect();
            max_depth(code, &insns, &pool, None, words)
        };
        let mut words = DescriptorWords::default();
        let calls = [
            op::GETSTATIC,
            0,
            8,
            op::GETSTATIC,
            0,
            8,
            op::INVOKESTATIC,
            0,
            5,
            op::RETURN,
        ];
        // 2, 4, then (JI)J pops 3 and pushes 2: 3.
        assert_eq!(depth(&calls, &mut words).unwrap(), 4);
        assert_eq!(depth(&calls, &mut words).unwrap(), 4);
        // The Methodref read as a field ('(' counts one word), and the Fieldref as a method (no ')'):
        // what the walk computes without the memo.
        assert_eq!(
            depth(&[op::GETSTATIC, 0, 5, op::RETURN], &mut words).unwrap(),
            1
        );
        assert!(depth(&[op::INVOKESTATIC, 0, 8, op::RETURN], &mut words).is_err());
        assert_eq!(depth(&calls, &mut words).unwrap(), 4);
        // A descriptor's Utf8 entry, remembered by now, named by an instruction: still not a reference.
        assert!(depth(&[op::INVOKESTATIC, 0, 2, op::RETURN], &mut words).is_err());
        assert!(depth(&[op::GETSTATIC, 0, 6, op::RETURN], &mut words).is_err());
        // Past the pool: an error, as before.
        assert!(depth(&[op::GETSTATIC, 0, 9, op::RETURN], &mut words).is_err());
    }
}
