//! Decoding instruction boundaries and operands from a `code` array.

use super::opcode::{self as op, Shape};
use crate::bytes::{read_i2, read_i4, read_u2};
use crate::error::{bail, Result};

/// One instruction: where it starts, its opcode and its encoded length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Instruction {
    pub pc: u32,
    pub opcode: u8,
    pub len: u32,
}

/// The operands of a tableswitch or lookupswitch, with offsets relative to the switch's own pc.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Switch {
    pub default: i32,
    /// `Some((low, high))` for tableswitch; the keys then run from low to high.
    pub range: Option<(i32, i32)>,
    /// (key, offset) pairs in encoded order.
    pub cases: Vec<(i32, i32)>,
}

/// Padding after a switch opcode at `pc` so that its operands are 4-byte aligned.
#[inline]
pub fn switch_padding(pc: u32) -> u32 {
    (4 - (pc + 1) % 4) % 4
}

/// Length of the instruction at `pc`, checked against the end of `code`.
/// `base` is the absolute offset of `code` in the class file, for errors.
pub fn instruction_length(code: &[u8], pc: usize, base: usize) -> Result<usize> {
    let opcode = code[pc];
    let (_, fixed, shape) = op::TABLE[opcode as usize];
    let len = match shape {
        Shape::Plain | Shape::Branch16 | Shape::Branch32 => fixed as usize,
        Shape::Invalid => bail!(base + pc, "invalid opcode {opcode:#04x} at pc {pc}"),
        Shape::Wide => match code.get(pc + 1) {
            Some(&op::IINC) => 6,
            Some(&(op::ILOAD..=op::ALOAD)) | Some(&(op::ISTORE..=op::ASTORE)) | Some(&op::RET) => 4,
            Some(other) => bail!(
                base + pc,
                "wide cannot modify opcode {other:#04x} at pc {pc}"
            ),
            None => bail!(base + pc, "truncated wide instruction at pc {pc}"),
        },
        Shape::TableSwitch | Shape::LookupSwitch => {
            let operands = pc + 1 + switch_padding(pc as u32) as usize;
            let header = if shape == Shape::TableSwitch { 12 } else { 8 };
            if operands + header > code.len() {
                bail!(base + pc, "truncated {} at pc {pc}", op::name(opcode));
            }
            let n = if shape == Shape::TableSwitch {
                let low = read_i4(code, operands + 4) as i64;
                let high = read_i4(code, operands + 8) as i64;
                if high < low {
                    bail!(
                        base + pc,
                        "tableswitch at pc {pc} has high {high} < low {low}"
                    );
                }
                12 + 4 * (high - low + 1)
            } else {
                let npairs = read_i4(code, operands + 4) as i64;
                if npairs < 0 {
                    bail!(base + pc, "lookupswitch at pc {pc} has negative npairs");
                }
                8 + 8 * npairs
            };
            if n > code.len() as i64 {
                bail!(base + pc, "truncated {} at pc {pc}", op::name(opcode));
            }
            operands - pc + n as usize
        }
    };
    if pc + len > code.len() {
        bail!(base + pc, "truncated {} at pc {pc}", op::name(opcode));
    }
    Ok(len)
}

/// Iterates over the instructions of a code array.
pub struct Instructions<'a> {
    code: &'a [u8],
    pc: usize,
    base: usize,
}

impl<'a> Instructions<'a> {
    pub fn new(code: &'a [u8], base: usize) -> Self {
        Instructions { code, pc: 0, base }
    }
}

impl Iterator for Instructions<'_> {
    type Item = Result<Instruction>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.pc >= self.code.len() {
            return None;
        }
        let pc = self.pc;
        let opcode = self.code[pc];
        let fixed = op::TABLE[opcode as usize].1 as usize;
        // Most instructions have a fixed length and a valid opcode: no need for the general path.
        if fixed != 0
            && op::TABLE[opcode as usize].2 != Shape::Invalid
            && pc + fixed <= self.code.len()
        {
            self.pc += fixed;
            return Some(Ok(Instruction {
                pc: pc as u32,
                opcode,
                len: fixed as u32,
            }));
        }
        Some(match instruction_length(self.code, pc, self.base) {
            Ok(len) => {
                self.pc += len;
                Ok(Instruction {
                    pc: pc as u32,
                    opcode: self.code[pc],
                    len: len as u32,
                })
            }
            Err(e) => {
                self.pc = self.code.len();
                Err(e)
            }
        })
    }
}

/// A method's code decoded once, with the indexes that the editor and the edits look up, in buffers
/// that one value keeps from method to method.
#[derive(Debug, Default)]
pub struct Decoded {
    pub insns: Vec<Instruction>,
    /// Indexes into `insns` of the branches and switches: the instructions whose encoding depends on
    /// their position.
    pub specials: Vec<u32>,
    /// Indexes into `insns` of the returns and allocations (`new` and the array instructions), where
    /// edits insert code, so that a plan need not walk the whole method to find them. Calls are not kept:
    /// they are many, and only the allocation probes look at them (`probes::vm_made`).
    pub notable: Vec<u32>,
    /// One bit per code byte, set where an instruction starts.
    pub starts: Vec<u64>,
    /// The largest constant-pool index an instruction names (0 if none does): an index past the pool would
    /// gain a meaning once an edit appends constants, so the class must then be left alone (`references.rs`).
    pub max_pool_index: u16,
}

// The decoder's per-opcode byte: the fixed length in the low bits (0 for wide, the switches and invalid
// opcodes, which take the checked path) and the indexes the instruction goes into.
const LENGTH: u8 = 0x0f;
const SPECIAL: u8 = 0x10;
const NOTABLE: u8 = 0x20;
/// A constant-pool index follows the opcode: a u1 for `ldc`, a u2 for the others.
const POOL: u8 = 0x40;

static DECODE: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut opcode = 0;
    while opcode < 256 {
        let (_, len, shape) = op::TABLE_CONST[opcode];
        t[opcode] = match shape {
            Shape::Plain => len,
            Shape::Branch16 | Shape::Branch32 => len | SPECIAL,
            Shape::TableSwitch | Shape::LookupSwitch => SPECIAL,
            Shape::Wide | Shape::Invalid => 0,
        };
        let o = opcode as u8;
        if (o >= op::IRETURN && o <= op::RETURN)
            || o == op::NEW
            || o == op::NEWARRAY
            || o == op::ANEWARRAY
            || o == op::MULTIANEWARRAY
        {
            t[opcode] |= NOTABLE;
        }
        if o == op::LDC
            || o == op::LDC_W
            || o == op::LDC2_W
            || (o >= op::GETSTATIC && o <= op::INVOKEDYNAMIC)
            || o == op::NEW
            || o == op::ANEWARRAY
            || o == op::CHECKCAST
            || o == op::INSTANCEOF
            || o == op::MULTIANEWARRAY
        {
            t[opcode] |= POOL;
        }
        opcode += 1;
    }
    t
};

impl Decoded {
    /// Decodes `code` (at absolute offset `base` in the class file, for errors), replacing what was there.
    pub fn decode(&mut self, code: &[u8], base: usize) -> Result<()> {
        self.insns.clear();
        self.specials.clear();
        self.notable.clear();
        self.starts.clear();
        self.starts.resize(code.len() / 64 + 1, 0);
        let mut max_pool_index = 0;
        // At most one instruction per byte: no growth (and copying) while decoding.
        self.insns.reserve(code.len());
        let mut pc = 0;
        while pc < code.len() {
            let opcode = code[pc];
            let info = DECODE[opcode as usize];
            let fixed = (info & LENGTH) as usize;
            let len = if fixed != 0 && pc + fixed <= code.len() {
                fixed
            } else {
                instruction_length(code, pc, base)?
            };
            self.starts[pc / 64] |= 1 << (pc % 64);
            if info & (SPECIAL | NOTABLE | POOL) != 0 {
                let index = self.insns.len() as u32;
                if info & SPECIAL != 0 {
                    self.specials.push(index);
                } else if info & NOTABLE != 0 {
                    self.notable.push(index);
                }
                if info & POOL != 0 {
                    // Fixed-length instructions: `len` already covers the operand.
                    let operand = if opcode == op::LDC {
                        code[pc + 1] as u16
                    } else {
                        read_u2(code, pc + 1)
                    };
                    max_pool_index = max_pool_index.max(operand);
                }
            }
            self.insns.push(Instruction {
                pc: pc as u32,
                opcode,
                len: len as u32,
            });
            pc += len;
        }
        self.max_pool_index = max_pool_index;
        Ok(())
    }
}

/// The branch offset of a Branch16/Branch32 instruction, relative to its pc.
#[inline]
pub fn branch_offset(code: &[u8], insn: Instruction) -> i32 {
    if op::shape(insn.opcode) == Shape::Branch32 {
        read_i4(code, insn.pc as usize + 1)
    } else {
        read_i2(code, insn.pc as usize + 1) as i32
    }
}

/// Decodes the operands of the switch at `pc` (whose length was already checked).
pub fn read_switch(code: &[u8], pc: u32) -> Switch {
    let at = (pc + 1 + switch_padding(pc)) as usize;
    let default = read_i4(code, at);
    if code[pc as usize] == op::TABLESWITCH {
        let low = read_i4(code, at + 4);
        let high = read_i4(code, at + 8);
        let cases = (0..=(high as i64 - low as i64) as usize)
            .map(|i| (low.wrapping_add(i as i32), read_i4(code, at + 12 + 4 * i)))
            .collect();
        Switch {
            default,
            range: Some((low, high)),
            cases,
        }
    } else {
        let n = read_i4(code, at + 4) as usize;
        let cases = (0..n)
            .map(|i| {
                (
                    read_i4(code, at + 8 + 8 * i),
                    read_i4(code, at + 12 + 8 * i),
                )
            })
            .collect();
        Switch {
            default,
            range: None,
            cases,
        }
    }
}

/// The local-variable index an instruction reads or writes, when it is a load, store, iinc or ret.
pub fn local_index(code: &[u8], insn: Instruction) -> Option<u16> {
    let pc = insn.pc as usize;
    match insn.opcode {
        op::WIDE => Some(read_u2(code, pc + 2)),
        op::ILOAD..=op::ALOAD | op::ISTORE..=op::ASTORE | op::RET | op::IINC => {
            Some(code[pc + 1] as u16)
        }
        op::ILOAD_0..=op::ALOAD_3 => Some(((insn.opcode - op::ILOAD_0) % 4) as u16),
        op::ISTORE_0..=op::ASTORE_3 => Some(((insn.opcode - op::ISTORE_0) % 4) as u16),
        _ => None,
    }
}

/// Whether `code` has an allocation site of the kinds asked for: `new` (objects), `newarray`, `anewarray`,
/// `multianewarray` (arrays), or a call that `counted_call` says is probed (given its offset: the calls
/// that return what the VM made, `probes::vm_made`, need the class's constant pool). The allocation
/// probes change no method without one, so a run-time start need not retransform a class none of whose
/// methods has one (and take its compiled code and profiles away). Code that does not decode counts as
/// allocating.
pub fn allocates(
    code: &[u8],
    objects: bool,
    arrays: bool,
    counted_call: impl Fn(usize) -> bool,
) -> bool {
    Instructions::new(code, 0).any(|insn| {
        insn.map_or(true, |i| match i.opcode {
            op::NEW => objects,
            op::NEWARRAY | op::ANEWARRAY | op::MULTIANEWARRAY => arrays,
            op::INVOKEVIRTUAL | op::INVOKESPECIAL | op::INVOKESTATIC => counted_call(i.pc as usize),
            _ => false,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocates_finds_the_sites_asked_for() {
        let none = |_| false;
        let array = [op::ICONST_1, op::NEWARRAY, 10, op::POP, op::RETURN];
        assert!(allocates(&array, false, true, none));
        assert!(!allocates(&array, true, false, none));
        let object = [op::NEW, 0, 1, op::RETURN];
        assert!(allocates(&object, true, false, none));
        assert!(!allocates(&object, false, true, none));
        assert!(allocates(
            &[op::ICONST_1, op::ANEWARRAY, 0, 3, op::RETURN],
            false,
            true,
            none
        ));
        assert!(!allocates(
            &[op::ALOAD_0, op::GETFIELD, 0, 2, op::IRETURN],
            true,
            true,
            none
        ));
        // 0xbb (new) as an operand (sipush 0xbb00) is not an instruction
        assert!(!allocates(
            &[op::SIPUSH, op::NEW, 0, op::IRETURN],
            true,
            true,
            none
        ));
        assert!(!allocates(&[], true, true, none));
        // a truncated instruction: allocating, to be safe
        assert!(allocates(&[op::SIPUSH], false, false, none));
        // a call counts as `counted_call` says
        let call = [op::ALOAD_0, op::INVOKEVIRTUAL, 0, 7, op::ARETURN];
        assert!(allocates(&call, false, false, |pc| pc == 1));
        assert!(!allocates(&call, true, true, none));
    }

    #[test]
    fn switch_padding_realigns_to_four() {
        assert_eq!(switch_padding(0), 3);
        assert_eq!(switch_padding(1), 2);
        assert_eq!(switch_padding(2), 1);
        assert_eq!(switch_padding(3), 0);
    }

    #[test]
    fn decodes_wide_and_tableswitch() {
        // 0: wide iinc 300 1; 6: nop; 7: tableswitch pad 0, default 13, low 0, high 0, [13]; 27: return
        let mut code = vec![op::WIDE, op::IINC, 1, 44, 0, 1, op::NOP, op::TABLESWITCH];
        for v in [20i32, 0, 0, 20] {
            code.extend_from_slice(&v.to_be_bytes());
        }
        code.push(op::RETURN);
        let insns: Vec<_> = Instructions::new(&code, 0).map(|i| i.unwrap()).collect();
        assert_eq!(
            insns.iter().map(|i| (i.pc, i.len)).collect::<Vec<_>>(),
            [(0, 6), (6, 1), (7, 17), (24, 1)]
        );
        assert_eq!(local_index(&code, insns[0]), Some(300));
        let s = read_switch(&code, 7);
        assert_eq!(
            (s.default, s.range, s.cases),
            (20, Some((0, 0)), vec![(0, 20)])
        );
    }

    #[test]
    fn truncated_switch_is_an_error_not_a_panic() {
        let code = [
            op::LOOKUPSWITCH,
            0,
            0,
            0,
            0,
            0,
            0,
            0,
            0x7f,
            0xff,
            0xff,
            0xff,
        ];
        assert!(instruction_length(&code, 0, 0).is_err());
    }
}
