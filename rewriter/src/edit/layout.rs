//! Where every original instruction lands after insertion, with short branches widened where their
//! offsets no longer fit in 16 bits.
//!
//! The layout is sparse: code only moves at *events* (an insertion point, a branch that may widen, a
//! switch whose padding may change), so a new offset is the old one plus the growth of all earlier
//! events, found by binary search. Methods are never walked byte by byte. Widening only ever grows
//! code, so the fixed point is reached in a few passes.

use super::insertions::{Insertions, Place};
use crate::bytecode::instructions::{branch_offset, read_switch, switch_padding, Instruction};
use crate::bytecode::opcode::{self as op, Shape};
use crate::error::{bail, Result};

/// A place where the code changes size or an instruction must be re-encoded.
#[derive(Clone, Debug)]
pub struct Event {
    pub pc: u32,
    /// Index of the instruction at `pc`.
    pub insn: usize,
    /// Total length of code inserted before / after the instruction.
    pub before_len: u32,
    pub after_len: u32,
    /// For a short branch: its old target. `None` for other instructions.
    pub short_target: Option<u32>,
    pub widened: bool,
    /// Entry code plus growth of all earlier events: `before(pc) = pc + shift`.
    shift: i64,
    /// Change in the instruction's own length (widening, switch padding).
    growth: i64,
}

impl Event {
    /// New offset of the event's instruction itself (after the code inserted before it).
    pub fn new_pc(&self) -> u32 {
        (self.pc as i64 + self.shift + self.before_len as i64) as u32
    }
}

pub struct Layout<'i> {
    insns: &'i [Instruction],
    /// One bit per code byte: set where an instruction starts (built while decoding).
    starts: &'i [u64],
    code_len: u32,
    pub events: Vec<Event>,
    /// Shift that applies after the last event.
    end_shift: i64,
    /// Length of the new code array.
    pub code_length: u32,
}

impl<'i> Layout<'i> {
    pub fn compute(
        code: &[u8],
        base: usize,
        insns: &'i [Instruction],
        specials: &[u32],
        starts: &'i [u64],
        ins: &Insertions,
        mut events: Vec<Event>,
    ) -> Result<Layout<'i>> {
        events.clear();
        let mut layout = Layout {
            insns,
            starts,
            code_len: code.len() as u32,
            events,
            end_shift: 0,
            code_length: 0,
        };
        layout.collect_events(code, base, specials, ins)?;
        loop {
            layout.place(ins.entry.len() as i64);
            // A branch and its target both lie in the new code, so no offset can exceed its length - 1:
            // up to 32768 bytes every short branch still fits, which spares nearly every method the
            // target lookups below.
            if layout.code_length <= i16::MAX as u32 + 1 {
                return Ok(layout);
            }
            let mut grew = false;
            for k in 0..layout.events.len() {
                let e = &layout.events[k];
                let Some(target) = e.short_target else {
                    continue;
                };
                if e.widened {
                    continue;
                }
                let offset = layout.target(target) as i64 - e.new_pc() as i64;
                if offset < i16::MIN as i64 || offset > i16::MAX as i64 {
                    layout.events[k].widened = true;
                    grew = true;
                }
            }
            if !grew {
                return Ok(layout);
            }
        }
    }

    fn starts_instruction(&self, pc: u32) -> bool {
        pc < self.code_len && self.starts[pc as usize / 64] & (1 << (pc % 64)) != 0
    }

    /// Builds the event list from the insertion points and `specials` (indexes of the instructions whose
    /// encoding depends on position: branches and switches), checking every target on the way. Only those
    /// instructions are visited, never the whole method.
    fn collect_events(
        &mut self,
        code: &[u8],
        base: usize,
        specials: &[u32],
        ins: &Insertions,
    ) -> Result<()> {
        let target_of = |layout: &Self, insn: &Instruction, offset: i32| -> Result<u32> {
            let t = insn.pc as i64 + offset as i64;
            if t < 0 || !layout.starts_instruction(t as u32) {
                bail!(
                    base + insn.pc as usize,
                    "{} at pc {} jumps to {t}, which is not an instruction",
                    op::name(insn.opcode),
                    insn.pc
                );
            }
            Ok(t as u32)
        };
        let points = &ins.points;
        let (mut p, mut s) = (0, 0);
        // Points come in pc order, so each lookup gallops forward from the previous one.
        let mut cursor = 0usize;
        self.events.reserve(specials.len() + points.len());
        while p < points.len() || s < specials.len() {
            let special_pc = specials
                .get(s)
                .map_or(u32::MAX, |&i| self.insns[i as usize].pc);
            let pc = points.get(p).map_or(special_pc, |pt| pt.pc.min(special_pc));
            let i = if pc == special_pc {
                s += 1;
                specials[s - 1] as usize
            } else {
                let mut step = 1;
                while cursor + step < self.insns.len() && self.insns[cursor + step].pc <= pc {
                    step *= 2;
                }
                let end = (cursor + step + 1).min(self.insns.len());
                match self.insns[cursor..end].binary_search_by_key(&pc, |i| i.pc) {
                    Ok(k) => {
                        cursor += k;
                        cursor
                    }
                    Err(_) => bail!(base, "insertion at pc {pc} is not at an instruction"),
                }
            };
            let insn = self.insns[i];
            let mut event = Event {
                pc,
                insn: i,
                before_len: 0,
                after_len: 0,
                short_target: None,
                widened: false,
                shift: 0,
                growth: 0,
            };
            while p < points.len() && points[p].pc == pc {
                let len = points[p].end - points[p].start;
                match points[p].place {
                    Place::Before => event.before_len += len,
                    Place::After => {
                        if op::ends_flow(insn.opcode) || op::shape(insn.opcode) != Shape::Plain {
                            bail!(
                                base,
                                "cannot insert code after {} at pc {pc}",
                                op::name(insn.opcode)
                            );
                        }
                        event.after_len += len;
                    }
                }
                p += 1;
            }
            match op::shape(insn.opcode) {
                Shape::Branch16 => {
                    event.short_target = Some(target_of(self, &insn, branch_offset(code, insn))?)
                }
                Shape::Branch32 => {
                    target_of(self, &insn, branch_offset(code, insn))?;
                }
                Shape::TableSwitch | Shape::LookupSwitch => {
                    let sw = read_switch(code, pc);
                    target_of(self, &insn, sw.default)?;
                    for (_, offset) in sw.cases {
                        target_of(self, &insn, offset)?;
                    }
                }
                _ => {}
            }
            self.events.push(event);
        }
        Ok(())
    }

    /// The shift at old `pc` and the index of the first event at or after it, searched from `hint` (the
    /// index the previous call returned): callers that ask in ascending order (frames, line numbers)
    /// usually find it a step or two ahead instead of binary-searching all events; a step back, or a
    /// jump far ahead, searches the rest.
    fn shift_from(&self, hint: &mut usize, pc: u32) -> (i64, Option<&Event>) {
        const NEAR: usize = 4;
        let events = &self.events;
        let mut k = (*hint).min(events.len());
        if k > 0 && events[k - 1].pc >= pc {
            k = events.partition_point(|e| e.pc < pc);
        } else {
            // events[..k] all lie before pc.
            let near = (k + NEAR).min(events.len());
            while k < near && events[k].pc < pc {
                k += 1;
            }
            if k == near {
                k += events[k..].partition_point(|e| e.pc < pc);
            }
        }
        *hint = k;
        match events.get(k) {
            Some(e) if e.pc == pc => (e.shift, Some(e)),
            Some(e) => (e.shift, None),
            None => (self.end_shift, None),
        }
    }

    /// One placement pass with the current set of widened branches.
    fn place(&mut self, entry_len: i64) {
        let mut shift = entry_len;
        for e in &mut self.events {
            e.shift = shift;
            let insn = self.insns[e.insn];
            e.growth = match op::shape(insn.opcode) {
                Shape::Branch16 if e.widened => {
                    if matches!(insn.opcode, op::GOTO | op::JSR) {
                        2
                    } else {
                        5
                    }
                }
                Shape::TableSwitch | Shape::LookupSwitch => {
                    let at = (e.pc as i64 + shift + e.before_len as i64) as u32;
                    switch_padding(at) as i64 - switch_padding(e.pc) as i64
                }
                _ => 0,
            };
            shift += e.before_len as i64 + e.after_len as i64 + e.growth;
        }
        self.end_shift = shift;
        self.code_length = (self.code_len as i64 + shift) as u32;
    }

    /// The shift that applies at old `pc` (before any `Before` code inserted at `pc` itself).
    fn shift_at(&self, pc: u32) -> (i64, Option<&Event>) {
        let k = self.events.partition_point(|e| e.pc < pc);
        match self.events.get(k) {
            Some(e) if e.pc == pc => (e.shift, Some(e)),
            Some(e) => (e.shift, None),
            None => (self.end_shift, None),
        }
    }

    /// New offset for a branch target, exception-range bound or frame at old `pc`: the start of the code
    /// inserted before that instruction, so a jump to a `return` runs an exit probe placed before it.
    /// Also defined at the end of the code.
    pub fn target(&self, pc: u32) -> u32 {
        (pc as i64 + self.shift_at(pc).0) as u32
    }

    /// [`Layout::target`] for a caller that keeps `hint` across calls in ascending order ([`Layout::shift_from`]).
    pub fn target_from(&self, hint: &mut usize, pc: u32) -> u32 {
        (pc as i64 + self.shift_from(hint, pc).0) as u32
    }

    /// [`Layout::loose_target`] with a search hint, as [`Layout::target_from`].
    pub fn loose_target_from(&self, hint: &mut usize, pc: u32) -> u32 {
        self.target_from(hint, pc.min(self.code_len))
    }

    /// New offset of the original instruction at `pc` itself.
    pub fn at(&self, pc: u32) -> u32 {
        let (shift, event) = self.shift_at(pc);
        (pc as i64 + shift + event.map_or(0, |e| e.before_len as i64)) as u32
    }

    /// Like [`Layout::target`], but tolerates offsets inside an instruction or past the end (seen in debug
    /// tables written by some tools).
    pub fn loose_target(&self, pc: u32) -> u32 {
        // Inside an instruction the shift of the instruction's start applies, so this stays monotonic
        // and within the code; no boundary lookup is needed.
        self.target(pc.min(self.code_len))
    }

    /// Whether `pc` starts an instruction or is the end of the code.
    pub fn is_boundary(&self, pc: u32) -> bool {
        pc == self.code_len || self.starts_instruction(pc)
    }

    pub fn is_instruction(&self, pc: u32) -> bool {
        self.starts_instruction(pc)
    }

    /// Length of the original code.
    pub fn code_len(&self) -> u32 {
        self.code_len
    }

    pub fn any_widened(&self) -> bool {
        self.events.iter().any(|e| e.widened)
    }

    /// Indexes of the instructions that are short branches widened by this layout.
    pub fn widened(&self) -> impl Iterator<Item = usize> + '_ {
        self.events.iter().filter(|e| e.widened).map(|e| e.insn)
    }
}
