//! The calls the probes inject: static methods of the bootstrap class `HeapProxy`, in one of two flavours.
//!
//! The agent defines `java/lang/HeapProxy` in java.base before any bytecode runs (docs/ARCHITECTURE.md,
//! "Where HeapProxy lives"), so every class, java.base included, can call it without a module edge.

use crate::bytes::ByteSink;
use crate::error::Result;
use crate::pool_builder::PoolBuilder;

/// The class every probe calls.
pub const PROXY_CLASS: &str = "java/lang/HeapProxy";

/// [`PoolBuilder::memo`] slot of the [`PROXY_CLASS`] constant; the slots below it hold the probes'
/// Methodrefs, one per [`Probe`] (its discriminant).
pub const MEMO_PROXY_CLASS: usize = 12;
const _: () = assert!(Probe::SuperCloned as usize == MEMO_PROXY_CLASS - 1);

/// Which variant of each HeapProxy method a call site uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flavour {
    /// A pure-Java wrapper that does nothing until the agent sets `HeapProxy.engaged`: safe in classes
    /// that load (and run) before the natives are bound.
    Early,
    /// The native method itself, for classes loaded after the agent bound the natives.
    Native,
}

/// The HeapProxy entry points.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Probe {
    /// `(Object)`: every object, from `java.lang.Object.<init>`, and an object `Object.clone` made (`vm_made`).
    ObjectAlloc,
    /// `(Object array, int site)`: after each `newarray` and `anewarray`.
    ArrayAlloc,
    /// `(Object array, int site)`: after each `multianewarray`, whose sub-arrays are counted too. A probe
    /// of its own, so that the common one never walks an array and never hands it to a call that would
    /// keep the JIT from scalar-replacing it.
    MultiArrayAlloc,
    /// `(int method)`: at method entry.
    MethodEnter,
    /// `(int method)`: before each return.
    MethodExit,
    /// `(int method)`: when an exception leaves the method.
    MethodUnwind,
    /// `(int site)`: after each `new`, when the rules ask for object sites.
    ObjectNew,
    /// `(Object, int site)`: after the constructor of an object of a `new` site, for live tracking.
    ObjectBuilt,
    /// `(int method)`: at method entry, counting the call only (no shadow frame, no exit probe needed).
    CountCall,
    /// `(int method)`: when an exception leaves a method whose calls are counted only.
    CountUnwind,
    /// `(Object array)`: after a call that returns an array the VM made (`vm_made`), by class only.
    ArrayMade,
    /// `(Object, int method, Class start)`: after `super.clone()` in a class whose superclass is not
    /// `Object`; counts the object when the call reached `Object.clone` from `start` (`vm_made`).
    SuperCloned,
}

impl Probe {
    pub fn method_name(self, flavour: Flavour) -> &'static str {
        match (self, flavour) {
            (Probe::ObjectAlloc, Flavour::Early) => "earlyObjectAlloc",
            (Probe::ObjectAlloc, Flavour::Native) => "objectAlloc",
            (Probe::ArrayAlloc, Flavour::Early) => "earlyArrayAlloc",
            (Probe::ArrayAlloc, Flavour::Native) => "arrayAlloc",
            (Probe::MultiArrayAlloc, Flavour::Early) => "earlyMultiArrayAlloc",
            (Probe::MultiArrayAlloc, Flavour::Native) => "multiArrayAlloc",
            (Probe::MethodEnter, Flavour::Early) => "earlyMethodEnter",
            (Probe::MethodEnter, Flavour::Native) => "methodEnter",
            (Probe::MethodExit, Flavour::Early) => "earlyMethodExit",
            (Probe::MethodExit, Flavour::Native) => "methodExit",
            (Probe::MethodUnwind, Flavour::Early) => "earlyMethodUnwind",
            (Probe::MethodUnwind, Flavour::Native) => "methodUnwind",
            (Probe::ObjectNew, Flavour::Early) => "earlyObjectNew",
            (Probe::ObjectNew, Flavour::Native) => "objectNew",
            (Probe::ObjectBuilt, Flavour::Early) => "earlyObjectBuilt",
            (Probe::ObjectBuilt, Flavour::Native) => "objectBuilt",
            (Probe::CountCall, Flavour::Early) => "earlyCountCall",
            (Probe::CountCall, Flavour::Native) => "countCall",
            (Probe::CountUnwind, Flavour::Early) => "earlyCountUnwind",
            (Probe::CountUnwind, Flavour::Native) => "countUnwind",
            (Probe::ArrayMade, Flavour::Early) => "earlyArrayMade",
            (Probe::ArrayMade, Flavour::Native) => "arrayMade",
            (Probe::SuperCloned, Flavour::Early) => "earlySuperCloned",
            (Probe::SuperCloned, Flavour::Native) => "superCloned",
        }
    }

    pub fn descriptor(self) -> &'static str {
        match self {
            Probe::ObjectAlloc | Probe::ArrayMade => "(Ljava/lang/Object;)V",
            Probe::ArrayAlloc | Probe::MultiArrayAlloc | Probe::ObjectBuilt => {
                "(Ljava/lang/Object;I)V"
            }
            Probe::MethodEnter
            | Probe::MethodExit
            | Probe::MethodUnwind
            | Probe::ObjectNew
            | Probe::CountCall
            | Probe::CountUnwind => "(I)V",
            Probe::SuperCloned => "(Ljava/lang/Object;ILjava/lang/Class;)V",
        }
    }

    /// Appends `invokestatic HeapProxy.<probe>`. The Methodref is looked up once per class: one rewrite
    /// uses one flavour, so the probe alone names the constant.
    pub fn call(
        self,
        flavour: Flavour,
        pool: &mut PoolBuilder<'_, '_>,
        out: &mut Vec<u8>,
    ) -> Result<()> {
        let index = self.methodref(flavour, pool)?;
        out.u1(crate::bytecode::opcode::INVOKESTATIC);
        out.u2(index);
        Ok(())
    }

    /// The pool index of this probe's Methodref, remembered in the memo slot numbered by the probe.
    pub fn methodref(self, flavour: Flavour, pool: &mut PoolBuilder<'_, '_>) -> Result<u16> {
        pool.memo(self as usize, |pool| {
            // The probes of a class share the class constant.
            let proxy = pool.memo(MEMO_PROXY_CLASS, |pool| pool.new_class(PROXY_CLASS))?;
            pool.new_methodref_in(proxy, self.method_name(flavour), self.descriptor())
        })
    }
}

/// The shortest instruction that pushes `value`, as bytes (at most 3) and their length.
pub fn push_int_array(value: u32, pool: &mut PoolBuilder<'_, '_>) -> Result<([u8; 3], usize)> {
    use crate::bytecode::opcode as op;
    Ok(match value {
        0..=5 => ([op::ICONST_0 + value as u8, 0, 0], 1),
        6..=127 => ([op::BIPUSH, value as u8, 0], 2),
        128..=32767 => {
            let [hi, lo] = (value as u16).to_be_bytes();
            ([op::SIPUSH, hi, lo], 3)
        }
        _ => {
            let index = pool.new_integer(value as i32)?;
            if index <= 255 {
                ([op::LDC, index as u8, 0], 2)
            } else {
                let [hi, lo] = index.to_be_bytes();
                ([op::LDC_W, hi, lo], 3)
            }
        }
    })
}

/// Appends the shortest instruction that pushes the int constant `value`.
pub fn push_int(value: u32, pool: &mut PoolBuilder<'_, '_>, out: &mut Vec<u8>) -> Result<()> {
    let (bytes, len) = push_int_array(value, pool)?;
    out.extend_from_slice(&bytes[..len]);
    Ok(())
}
