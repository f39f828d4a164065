//! The one entry point the agent and the CLI share: parse a class, let an edit plan insertions for each
//! method, and write the result (or report that nothing changed).

use crate::attributes::code::CodeAttribute;
use crate::attributes::names;
use crate::bytecode::instructions::{Decoded, Instruction};
use crate::bytecode::opcode as op;
use crate::class_writer::write_class;
use crate::classfile::{ClassFile, Member};
use crate::edit::layout::Event;
use crate::edit::method_writer::{write_code, MethodInput};
use crate::edit::stack_depth::DescriptorWords;
use crate::edit::{FrameMode, Insertions};
use crate::error::{ErrorKind, Result};
use crate::pool_builder::{PoolBuffers, PoolBuilder};
use crate::references::check_in_range;
use std::cell::RefCell;

/// What a method edit sees of the method it plans for.
pub struct MethodView<'m, 'a> {
    pub class: &'m ClassFile<'a>,
    pub method: &'m Member<'a>,
    pub name: &'a [u8],
    pub descriptor: &'a [u8],
    pub code: &'m CodeAttribute<'a>,
    pub insns: &'m [Instruction],
    /// Indexes into `insns` of the returns and allocations, in code order.
    pub notable: &'m [u32],
}

impl MethodView<'_, '_> {
    /// The returns and allocations (`new`, `newarray`, `anewarray`, `multianewarray`), in code order:
    /// where edits usually insert code.
    pub fn notable(&self) -> impl Iterator<Item = Instruction> + Clone + '_ {
        self.notable.iter().map(|&i| self.insns[i as usize])
    }
}

/// Decides, per method, what to insert. Implementations hold no per-class state, so one edit value can
/// serve every class (and every thread of the agent).
pub trait MethodEdit {
    /// Whether the edit may touch this class at all; `false` skips parsing its methods.
    fn wants_class(&self, _class: &ClassFile<'_>) -> bool {
        true
    }
    /// Fills `out` with the insertions for one method; leaving it empty leaves the method as it is.
    fn plan(
        &self,
        method: &MethodView<'_, '_>,
        pool: &mut PoolBuilder<'_, '_>,
        out: &mut Insertions,
    ) -> Result<()>;
}

#[derive(Clone, Copy, Debug)]
pub struct Options {
    pub frames: FrameMode,
    /// Re-encode every method even when the edit inserts nothing (for round-trip tests).
    pub force_reencode: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            frames: FrameMode::Relocate,
            force_reencode: false,
        }
    }
}

/// The result of rewriting one class.
#[derive(Debug, Default)]
pub struct Rewritten {
    /// The new class file, or `None` when nothing was changed (the input stands).
    pub bytes: Option<Vec<u8>>,
    pub edited_methods: u32,
    /// Methods left unedited, each with the reason (for example the 64 KB limit).
    pub warnings: Vec<String>,
}

/// The working buffers of a rewrite, kept per thread from class to class: the agent and the CLI rewrite
/// class after class on the same threads, and allocating and growing these anew for every class cost
/// about a tenth of the probes' time. Every user empties what it takes before use.
#[derive(Default)]
struct Scratch {
    decoded: Decoded,
    ins: Insertions,
    events: Vec<Event>,
    /// New Code bodies of a class, one after the other.
    bodies: Vec<u8>,
    pool: PoolBuffers,
    descriptor_words: DescriptorWords,
}

/// Buffers bigger than this (bytes) are released after the class rather than kept for the next one, so
/// that one huge class does not pin its memory on a thread for good.
const KEPT_SCRATCH_BYTES: usize = 1 << 20;

impl Scratch {
    fn release_large(&mut self) {
        if self.bodies.capacity() > KEPT_SCRATCH_BYTES {
            self.bodies = Vec::new();
        }
        if self.decoded.insns.capacity() * std::mem::size_of::<Instruction>() > KEPT_SCRATCH_BYTES {
            self.decoded = Decoded::default();
        }
    }
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// Rewrites one class file.
pub fn rewrite(bytes: &[u8], edit: &dyn MethodEdit, options: Options) -> Result<Rewritten> {
    let class = ClassFile::read(bytes)?;
    SCRATCH
        .with(|scratch| match scratch.try_borrow_mut() {
            Ok(mut scratch) => {
                let result = rewrite_parsed(&class, edit, options, &mut scratch);
                scratch.release_large();
                result
            }
            // Only a rewrite started from inside an edit gets here; it uses buffers of its own.
            Err(_) => rewrite_parsed(&class, edit, options, &mut Scratch::default()),
        })
        .map_err(|e| e.within(format!("class {}", String::from_utf8_lossy(class.name()))))
}

fn rewrite_parsed(
    class: &ClassFile<'_>,
    edit: &dyn MethodEdit,
    options: Options,
    scratch: &mut Scratch,
) -> Result<Rewritten> {
    let mut result = Rewritten::default();
    if !edit.wants_class(class) && !options.force_reencode {
        return Ok(result);
    }
    let Scratch {
        decoded,
        ins,
        events,
        bodies,
        pool: pool_buffers,
        descriptor_words,
    } = scratch;
    descriptor_words.reset();
    let mut pool = PoolBuilder::with_buffers(&class.pool, std::mem::take(pool_buffers));
    // New Code bodies share one buffer; `new_code[i]` is the range of method i's body in it.
    bodies.clear();
    bodies.reserve(class.members_raw.len() + class.members_raw.len() / 4);
    let mut new_code: Vec<Option<(usize, usize)>> = vec![None; class.methods.len()];
    // javac and most generators share one "Code" string; remember its index to skip the name lookups.
    let mut code_name = 0u16;
    let mut max_pool_index = 0u16;
    for (i, method) in class.methods.iter().enumerate() {
        let Some(code_attr) = method.attributes.iter().find(|a| {
            a.name_index == code_name
                || (class.attribute_name(a) == names::CODE && {
                    code_name = a.name_index;
                    true
                })
        }) else {
            continue;
        };
        let name = class.pool.utf8(method.name_index)?;
        let descriptor = class.pool.utf8(method.descriptor_index)?;
        let within = || {
            format!(
                "method {}{}",
                String::from_utf8_lossy(name),
                String::from_utf8_lossy(descriptor)
            )
        };
        let code = CodeAttribute::read(&code_attr).map_err(|e| e.within(within()))?;
        decoded
            .decode(code.code, code.code_offset)
            .map_err(|e| e.within(within()))?;
        max_pool_index = max_pool_index.max(decoded.max_pool_index);
        if must_stay_unedited(name, descriptor, &code) {
            continue;
        }
        let view = MethodView {
            class,
            method,
            name,
            descriptor,
            code: &code,
            insns: &decoded.insns,
            notable: &decoded.notable,
        };
        ins.clear();
        match edit.plan(&view, &mut pool, ins) {
            Ok(()) => {}
            Err(e) if e.kind() == ErrorKind::Unsupported => {
                result.warnings.push(e.within(within()).to_string());
                continue;
            }
            Err(e) => return Err(e.within(within())),
        }
        ins.force = options.force_reencode;
        if ins.is_empty() {
            continue;
        }
        ins.sorted_points();
        let input = MethodInput {
            class,
            method,
            code: &code,
            insns: &decoded.insns,
            specials: &decoded.specials,
            starts: &decoded.starts,
        };
        let start = bodies.len();
        match write_code(
            &input,
            ins,
            options.frames,
            &mut pool,
            bodies,
            events,
            descriptor_words,
        ) {
            Ok(()) => {
                new_code[i] = Some((start, bodies.len()));
                result.edited_methods += 1;
            }
            Err(e) if e.kind() == ErrorKind::Unsupported => {
                bodies.truncate(start);
                result.warnings.push(e.within(within()).to_string())
            }
            Err(e) => return Err(e.within(within())),
        }
    }
    if new_code.iter().any(Option::is_some) || pool.is_extended() || options.force_reencode {
        if pool.is_extended() {
            check_in_range(class, max_pool_index)?;
        }
        // New bodies replace old ones, so this bounds the output and the buffer never grows.
        let mut out =
            Vec::with_capacity(class_bytes_len(class) + bodies.len() + pool.appended_len() + 256);
        let code: Vec<Option<&[u8]>> = new_code
            .iter()
            .map(|r| r.map(|(a, b)| &bodies[a..b]))
            .collect();
        write_class(class, &pool, &code, &mut out);
        result.bytes = Some(out);
    }
    *pool_buffers = pool.into_buffers();
    Ok(result)
}

/// Methods whose exact bytes the JVM depends on. HotSpot treats a `finalize()V` whose body is a lone
/// `return` as no finalizer at all (`Method::is_empty_method`); inserting anything there would make
/// every instance finalizable (for `Object.finalize`, every object in the VM, which breaks start-up).
pub fn must_stay_unedited(name: &[u8], descriptor: &[u8], code: &CodeAttribute<'_>) -> bool {
    name == b"finalize" && descriptor == b"()V" && code.code == [op::RETURN]
}

fn class_bytes_len(class: &ClassFile<'_>) -> usize {
    class.pool.raw_entries().len() + class.members_raw.len() + 64
}
