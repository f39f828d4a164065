//! Where every original instruction lands after insertion, with short branches widened where their
//! offsets no longer fit in 16 bits. Widening only ever grows code, so the fixed point is reached in a
//! few passes.

use super::insertions::{Insertions, Place};
use crate::bytecode::instructions::{branch_offset, read_switch, switch_padding, Instruction};
use crate::bytecode::opcode::{self as op, Shape};
use crate::error::{bail, Result};

/// Marks bytes that are not the start of an instruction.
pub const NOT_AN_INSTRUCTION: u32 = u32::MAX;

pub struct Layout {
    /// New offset of the code that now precedes each original instruction (its `Before` insertions),
    /// indexed by old pc; also defined at `code.len()`, the end of the original code.
    pub before: Vec<u32>,
    /// New offset of each original instruction itself.
    pub at: Vec<u32>,
    /// Per instruction index: a short branch that had to be widened.
    pub widened: Vec<bool>,
    /// Length of the new code array.
    pub code_length: u32,
}

impl Layout {
    /// New offset for a branch target, exception-range bound or frame at old `pc`.
    #[inline]
    pub fn target(&self, pc: u32) -> u32 {
        self.before[pc as usize]
    }

    /// Like [`Layout::target`], but tolerates offsets inside an instruction (seen in debug tables written
    /// by some tools) by using the instruction that contains them.
    pub fn loose_target(&self, pc: u32) -> u32 {
        let mut pc = (pc as usize).min(self.before.len() - 1);
        while self.before[pc] == NOT_AN_INSTRUCTION {
            pc -= 1;
        }
        self.before[pc]
    }

    pub fn is_boundary(&self, pc: u32) -> bool {
        self.before.get(pc as usize).is_some_and(|&b| b != NOT_AN_INSTRUCTION)
    }

    pub fn any_widened(&self) -> bool {
        self.widened.iter().any(|&w| w)
    }

    pub fn compute(code: &[u8], base: usize, insns: &[Instruction], ins: &Insertions) -> Result<Layout> {
        let n = code.len();
        let mut layout = Layout {
            before: vec![NOT_AN_INSTRUCTION; n + 1],
            at: vec![NOT_AN_INSTRUCTION; n + 1],
            widened: vec![false; insns.len()],
            code_length: 0,
        };
        for insn in insns {
            layout.before[insn.pc as usize] = 0;
        }
        layout.before[n] = 0;
        let short_branches = layout.check_targets(code, base, insns)?;
        loop {
            layout.place(insns, ins)?;
            let mut grew = false;
            for &(i, target) in &short_branches {
                if layout.widened[i] {
                    continue;
                }
                let from = layout.at[insns[i].pc as usize] as i64;
                let offset = layout.before[target as usize] as i64 - from;
                if offset < i16::MIN as i64 || offset > i16::MAX as i64 {
                    layout.widened[i] = true;
                    grew = true;
                }
            }
            if !grew {
                return Ok(layout);
            }
        }
    }

    /// Checks that every branch and switch target is an instruction boundary; returns the short
    /// branches as (instruction index, old target).
    fn check_targets(&self, code: &[u8], base: usize, insns: &[Instruction]) -> Result<Vec<(usize, u32)>> {
        let mut short = Vec::new();
        let target_of = |insn: &Instruction, offset: i32| -> Result<u32> {
            let t = insn.pc as i64 + offset as i64;
            if t < 0 || t >= code.len() as i64 || !self.is_boundary(t as u32) {
                bail!(base + insn.pc as usize, "{} at pc {} jumps to {t}, which is not an instruction", op::name(insn.opcode), insn.pc);
            }
            Ok(t as u32)
        };
        for (i, insn) in insns.iter().enumerate() {
            match op::shape(insn.opcode) {
                Shape::Branch16 => short.push((i, target_of(insn, branch_offset(code, *insn))?)),
                Shape::Branch32 => {
                    target_of(insn, branch_offset(code, *insn))?;
                }
                Shape::TableSwitch | Shape::LookupSwitch => {
                    let s = read_switch(code, insn.pc);
                    target_of(insn, s.default)?;
                    for (_, offset) in s.cases {
                        target_of(insn, offset)?;
                    }
                }
                _ => {}
            }
        }
        Ok(short)
    }

    /// One placement pass with the current set of widened branches.
    fn place(&mut self, insns: &[Instruction], ins: &Insertions) -> Result<()> {
        let mut pos = ins.entry.len() as u32;
        let points = &ins.points;
        let mut p = 0;
        for (i, insn) in insns.iter().enumerate() {
            let pc = insn.pc;
            self.before[pc as usize] = pos;
            while p < points.len() && points[p].pc == pc && points[p].place == Place::Before {
                pos += points[p].end - points[p].start;
                p += 1;
            }
            self.at[pc as usize] = pos;
            pos += match op::shape(insn.opcode) {
                Shape::Branch16 if self.widened[i] => {
                    if matches!(insn.opcode, op::GOTO | op::JSR) {
                        5
                    } else {
                        8
                    }
                }
                Shape::TableSwitch | Shape::LookupSwitch => {
                    insn.len - switch_padding(pc) + switch_padding(pos)
                }
                _ => insn.len,
            };
            while p < points.len() && points[p].pc == pc && points[p].place == Place::After {
                if op::ends_flow(insn.opcode) || op::shape(insn.opcode) != Shape::Plain {
                    bail!(0, "cannot insert code after {} at pc {pc}", op::name(insn.opcode));
                }
                pos += points[p].end - points[p].start;
                p += 1;
            }
        }
        if p != points.len() {
            bail!(0, "insertion at pc {} is not at an instruction", points[p].pc);
        }
        let end = self.before.len() - 1;
        self.before[end] = pos;
        self.at[end] = pos;
        self.code_length = pos;
        Ok(())
    }
}
