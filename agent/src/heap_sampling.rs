//! The JVM's heap sampler (JVMTI SampledObjectAlloc): about one allocation per SIZE bytes of each
//! thread's allocation is reported here, on the allocating thread. With `live=SIZE` it is tagged with
//! its class and size (live.rs weighs it); with `stacks=SIZE` its stack is kept (sampled_stacks.rs).
//! The probes take no part, so these modes cost what counting costs plus the samples. Classes are
//! numbered by tagging their mirrors, so that a class costs a signature lookup only the first time it
//! is sampled.

use jni_sys::{jclass, jlong, jobject};

use crate::jni::Jni;
use crate::jvmti::{jthread, ERROR_NONE};
use crate::live::{self, Live, Owner, Sampling};
use crate::report::java_name;
use crate::state::{agent, Agent};

/// JVMTI SampledObjectAlloc, on the allocating thread.
pub fn sampled_object_alloc(_: Jni, _thread: jthread, object: jobject, class: jclass, size: jlong) {
    {
        if crate::own_allocation::active() {
            return;
        }
        let Some(a) = agent() else { return };
        if let Some(stacks) = &a.sampled_stacks {
            stacks.sample(a.jvmti, size);
        }
        let Some(live) = a
            .live
            .as_ref()
            .filter(|l| matches!(l.sampling, Sampling::Bytes(_)))
        else {
            return;
        };
        let Some(n) = class_number(a, live, class) else {
            return;
        };
        let tag = live::encode(Owner::SampledClass(n), size);
        if a.jvmti.set_tag(object, tag) == ERROR_NONE {
            live.tagged(tag);
        }
    }
}

/// The number of `class`, from its mirror's tag, or given now. Two threads sampling a new class at
/// once may give it two numbers; the report adds classes up by name, so nothing is lost.
pub(crate) fn class_number(a: &Agent, live: &Live, class: jclass) -> Option<u32> {
    if let Some(n) = live::mirror_number(a.jvmti.tag(class)) {
        return Some(n);
    }
    let n = live.number_class(java_name(&a.jvmti.class_signature(class)?))?;
    a.jvmti.set_tag(class, live::mirror_tag(n));
    Some(n)
}
