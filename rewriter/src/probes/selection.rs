//! What the probes ask of a configuration: which classes and methods to instrument. The rules crate
//! implements it from a YAML file; tests implement it directly. Names are in internal form
//! (`java/lang/String`), as they appear in the class file.

pub trait Selection: Send + Sync {
    /// Whether the `java.lang.Object.<init>` allocation probe is on.
    fn objects(&self) -> bool;

    /// A fast class-level check: `false` means no method of `class` gets an array or method probe, so
    /// the rewriter returns the class untouched without parsing its methods.
    fn class_wanted(&self, class: &[u8]) -> bool;

    /// Whether the array-allocation sites in this method get a probe.
    fn arrays(&self, class: &[u8], method: &[u8], descriptor: &[u8]) -> bool;

    /// Whether the `new` instructions in this method get a site probe (object sites, depth >= 1).
    /// Off unless a selection asks: per-class counts need only the `Object.<init>` probe.
    fn object_sites(&self, _class: &[u8], _method: &[u8], _descriptor: &[u8]) -> bool {
        false
    }

    /// Whether each object built at an object site is passed, once constructed, to
    /// `HeapProxy.objectBuilt(Object, int)`, so that live tracking knows its site.
    fn live_objects(&self) -> bool {
        false
    }

    /// Whether this method gets entry/exit probes. `access` is the method's access flags, so that
    /// bridge and synthetic methods can be told apart.
    fn methods(&self, class: &[u8], method: &[u8], descriptor: &[u8], access: u16) -> bool;
}

/// Every probe on every method of every class (what `rules/all.yaml` selects): for tests and benchmarks.
pub struct Everything;

impl Selection for Everything {
    fn objects(&self) -> bool {
        true
    }
    fn class_wanted(&self, _: &[u8]) -> bool {
        true
    }
    fn arrays(&self, _: &[u8], _: &[u8], _: &[u8]) -> bool {
        true
    }
    fn methods(&self, _: &[u8], _: &[u8], _: &[u8], _: u16) -> bool {
        true
    }
}
