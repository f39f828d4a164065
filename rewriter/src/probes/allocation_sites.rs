//! Allocation sites: the instructions that allocate, each named by a static site id (see [`IdRegistry`]),
//! so that the agent needs no stack walk to know the allocating frame.
//!
//! * Arrays: after each `newarray` and `anewarray`, `dup; push site; invokestatic
//!   HeapProxy.arrayAlloc(Object, int)`; after each `multianewarray`, the same with
//!   `HeapProxy.multiArrayAlloc`, which also counts the sub-arrays (by class; the site counts the outer
//!   array only).
//! * Objects (when the rules ask for object sites): after each `new`, `push site; invokestatic
//!   HeapProxy.objectNew(int)`. The probe comes after the `new` rather than before it so that the `new`
//!   keeps its offset relative to nothing inserted in front of it: frames that name `uninitialized(pc)`
//!   are remapped like any other offset. The uninitialised reference is left alone on the stack, which
//!   the verifier allows; it cannot be passed to a method. Counting at the `new` rather than in the
//!   constructor counts the object even when its constructor throws, as the VM allocated it.
//!   (The class counts come from `Object.<init>`, see `object_alloc`.)
//! * What the VM makes for a call (an array's `clone()`, `Array.newInstance`, `super.clone()` into
//!   `Object.clone`): after the call, `dup; invokestatic HeapProxy.arrayMade(Object)` or `objectAlloc`, or
//!   `superCloned` where only the run time knows whether `super.clone()` reaches `Object.clone`; by class
//!   and without a site (see `vm_made`).
//! * Live objects (when live tracking is on): after the `invokespecial <init>` that finishes an object
//!   of a `new` site, `dup; push site; invokestatic HeapProxy.objectBuilt(Object, int)`, so that the
//!   agent can tag the object with its site (see `constructed_objects`).

use super::constructed_objects::constructed_objects;
use super::heap_proxy::{push_int, Flavour, Probe};
use super::ids::IdRegistry;
use super::vm_made::{clone_call, made_by_call, CloneCall, Made};
use crate::attributes::debug_tables::{read_line_numbers, LineNumber};
use crate::attributes::names;
use crate::bytecode::instructions::Instruction;
use crate::bytecode::opcode as op;
use crate::bytes::read_u2;
use crate::edit::Insertions;
use crate::error::Result;
use crate::pool_builder::PoolBuilder;
use crate::rewrite::MethodView;

pub fn is_array_allocation(opcode: u8) -> bool {
    matches!(opcode, op::NEWARRAY | op::ANEWARRAY | op::MULTIANEWARRAY)
}

/// Which allocating instructions of a method get a site probe.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SiteKinds {
    pub arrays: bool,
    pub objects: bool,
    /// Objects are also handed over once constructed (live tracking); implies `objects`.
    pub built_objects: bool,
    /// `super.clone()` calls into `Object.clone` count the object they return (the `Object.<init>` probe
    /// is on, and a clone runs no constructor).
    pub cloned_objects: bool,
}

impl SiteKinds {
    pub fn includes(self, opcode: u8) -> bool {
        (self.arrays && is_array_allocation(opcode)) || (self.objects && opcode == op::NEW)
    }

    pub fn any(self) -> bool {
        self.arrays || self.objects || self.cloned_objects
    }

    /// Whether a call that returns what the VM made gets a probe.
    pub fn includes_made(self, made: Made) -> bool {
        match made {
            Made::Array => self.arrays,
            Made::Object => self.cloned_objects,
        }
    }
}

/// Whether the method has an instruction these kinds probe.
pub fn has_sites(m: &MethodView<'_, '_>, kinds: SiteKinds) -> bool {
    kinds.any()
        && (m.notable().any(|i| kinds.includes(i.opcode))
            || made_by_calls(m, kinds).next().is_some())
}

/// How a call that returns what the VM made is counted after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum MadeProbe {
    Array,
    Object,
    /// `super.clone()` decided at run time, from the superclass at this pool index (`vm_made::CloneCall`).
    SuperCloned(u16),
}

/// The calls that return what the VM made and that `kinds` probes, with their probe. The whole method is
/// walked: calls are not among its notable instructions.
fn made_by_calls<'m>(
    m: &'m MethodView<'_, '_>,
    kinds: SiteKinds,
) -> impl Iterator<Item = (Instruction, MadeProbe)> + 'm {
    let wanted = kinds.arrays || kinds.cloned_objects;
    m.insns
        .iter()
        .filter(move |i| {
            wanted
                && matches!(
                    i.opcode,
                    op::INVOKEVIRTUAL | op::INVOKESPECIAL | op::INVOKESTATIC
                )
        })
        .filter_map(move |&i| {
            let pool = &m.class.pool;
            let probe = match made_by_call(pool, m.code.code, i.pc as usize)? {
                made if !kinds.includes_made(made) => return None,
                Made::Array => MadeProbe::Array,
                Made::Object => {
                    let owner = pool
                        .member_ref(read_u2(m.code.code, i.pc as usize + 1))
                        .ok()?
                        .0;
                    match clone_call(m.class, owner) {
                        CloneCall::Object => MadeProbe::Object,
                        CloneCall::FromSuper(start) => MadeProbe::SuperCloned(start),
                        CloneCall::Elsewhere => return None,
                    }
                }
            };
            Some((i, probe))
        })
}

pub fn plan(
    m: &MethodView<'_, '_>,
    method_id: u32,
    kinds: SiteKinds,
    ids: &IdRegistry,
    flavour: Flavour,
    pool: &mut PoolBuilder<'_, '_>,
    out: &mut Insertions,
) -> Result<()> {
    // One snippet per kind serves the whole method: the method id and the superclass are the method's.
    let mut probe = [Vec::new(), Vec::new(), Vec::new()];
    for (insn, made) in made_by_calls(m, kinds) {
        let (slot, call) = match made {
            MadeProbe::Array => (0, Probe::ArrayMade),
            MadeProbe::Object => (1, Probe::ObjectAlloc),
            MadeProbe::SuperCloned(_) => (2, Probe::SuperCloned),
        };
        let code = &mut probe[slot];
        if code.is_empty() {
            code.push(op::DUP);
            if let MadeProbe::SuperCloned(start) = made {
                push_int(method_id, pool, code)?;
                push_class(start, code);
            }
            call.call(flavour, pool, code)?;
        }
        out.after(insn.pc, code);
        // The result's copy, and for superCloned the method id and the class.
        out.need_stack(if matches!(made, MadeProbe::SuperCloned(_)) {
            3
        } else {
            1
        });
    }
    let mut sites = m.notable().filter(|i| kinds.includes(i.opcode));
    let count = sites.clone().count() as u32;
    if count == 0 {
        return Ok(());
    }
    // Described once per method, in code order; nothing is allocated when the block already exists.
    let mut lines = None;
    let mut described = sites.clone();
    let first = ids.site_ids(method_id, count, |_, out| {
        let insn = described.next().expect("count sites");
        allocated_type(m, insn, out);
        let lines = lines.get_or_insert_with(|| line_table(m));
        (insn.pc, line_at(lines, insn.pc))
    });
    let built = if kinds.built_objects {
        constructed_objects(m)?
    } else {
        Vec::new()
    };
    let mut code = Vec::with_capacity(8);
    for k in 0..count {
        let insn = sites.next().expect("count sites");
        code.clear();
        if insn.opcode == op::NEW {
            push_int(first + k, pool, &mut code)?;
            Probe::ObjectNew.call(flavour, pool, &mut code)?;
            if let Ok(i) = built.binary_search_by_key(&insn.pc, |&(new_pc, _)| new_pc) {
                let mut finished = vec![op::DUP];
                push_int(first + k, pool, &mut finished)?;
                Probe::ObjectBuilt.call(flavour, pool, &mut finished)?;
                out.after(built[i].1, &finished);
            }
        } else {
            code.push(op::DUP);
            push_int(first + k, pool, &mut code)?;
            let probe = if insn.opcode == op::MULTIANEWARRAY {
                Probe::MultiArrayAlloc
            } else {
                Probe::ArrayAlloc
            };
            probe.call(flavour, pool, &mut code)?;
        }
        out.after(insn.pc, &code);
    }
    out.need_stack(2);
    Ok(())
}

/// Appends `ldc` (or `ldc_w`) of the Class constant at `index`.
fn push_class(index: u16, out: &mut Vec<u8>) {
    match u8::try_from(index) {
        Ok(short) => out.extend_from_slice(&[op::LDC, short]),
        Err(_) => {
            out.push(op::LDC_W);
            out.extend_from_slice(&index.to_be_bytes());
        }
    }
}

/// The method's line table sorted by start (class files need not sort it).
fn line_table(m: &MethodView<'_, '_>) -> Vec<LineNumber> {
    let mut lines = m
        .code
        .attributes
        .iter()
        .find(|a| m.class.attribute_name(a) == names::LINE_NUMBER_TABLE)
        .and_then(|a| read_line_numbers(&a).ok())
        .unwrap_or_default();
    lines.sort_by_key(|l| l.start_pc);
    lines
}

/// The line of the entry with the greatest start at or before `pc`.
fn line_at(lines: &[LineNumber], pc: u32) -> Option<u16> {
    let k = lines.partition_point(|l| l.start_pc as u32 <= pc);
    k.checked_sub(1).map(|k| lines[k].line)
}

/// Appends the descriptor of the type the instruction creates, for reports.
fn allocated_type(m: &MethodView<'_, '_>, insn: Instruction, out: &mut Vec<u8>) {
    let code = m.code.code;
    let pc = insn.pc as usize;
    let class_operand = || {
        m.class
            .pool
            .class_name(read_u2(code, pc + 1))
            .unwrap_or(b"?")
    };
    match insn.opcode {
        op::NEWARRAY => {
            out.extend_from_slice(op::newarray_descriptor(code[pc + 1]).unwrap_or(b"[?"))
        }
        op::ANEWARRAY => {
            let element = class_operand();
            out.push(b'[');
            if element.first() == Some(&b'[') {
                out.extend_from_slice(element);
            } else {
                out.push(b'L');
                out.extend_from_slice(element);
                out.push(b';');
            }
        }
        op::NEW => {
            out.push(b'L');
            out.extend_from_slice(class_operand());
            out.push(b';');
        }
        _ => out.extend_from_slice(class_operand()),
    }
}
