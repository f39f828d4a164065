//! The edit the agent and `rewrite-class` apply: every probe the selection asks for, in one pass.

use super::allocation_sites::{self, SiteKinds};
use super::exclusions::{class_never_instrumented, method_probes_forbidden};
use super::heap_proxy::Flavour;
use super::ids::IdRegistry;
use super::method_calls::{self, CallProbes};
use super::object_alloc;
use super::selection::Selection;
use crate::classfile::ClassFile;
use crate::edit::Insertions;
use crate::error::Result;
use crate::pool_builder::PoolBuilder;
use crate::rewrite::{MethodEdit, MethodView};

pub struct Instrumenter<'s> {
    pub selection: &'s dyn Selection,
    pub ids: &'s IdRegistry,
    pub flavour: Flavour,
    /// The shape of the method probes (the agent's `calls=` mode).
    pub calls: CallProbes,
}

impl MethodEdit for Instrumenter<'_> {
    fn wants_class(&self, class: &ClassFile<'_>) -> bool {
        let name = class.name();
        !class_never_instrumented(name)
            && ((self.selection.objects() && name == b"java/lang/Object")
                || self.selection.class_wanted(name))
    }

    fn plan(
        &self,
        m: &MethodView<'_, '_>,
        pool: &mut PoolBuilder<'_, '_>,
        out: &mut Insertions,
    ) -> Result<()> {
        let class = m.class.name();
        if self.selection.objects()
            && object_alloc::is_object_constructor(class, m.name, m.descriptor)
        {
            object_alloc::plan(self.flavour, pool, out)?;
        }
        let objects = self.selection.object_sites(class, m.name, m.descriptor);
        let kinds = SiteKinds {
            arrays: self.selection.arrays(class, m.name, m.descriptor),
            objects,
            built_objects: objects && self.selection.live_objects(),
            cloned_objects: self.selection.objects(),
        };
        let sites = allocation_sites::has_sites(m, kinds);
        let methods = method_probes_forbidden(class, m.name).is_none()
            && self
                .selection
                .methods(class, m.name, m.descriptor, m.method.access);
        if !sites && !methods {
            return Ok(());
        }
        let id = self.ids.method_id(class, m.name, m.descriptor);
        if sites {
            allocation_sites::plan(m, id, kinds, self.ids, self.flavour, pool, out)?;
        }
        if methods && method_calls::plan(m, id, self.calls, self.flavour, pool, out)? {
            self.ids.set_counted_only(id);
        }
        Ok(())
    }
}
