//! `start live` and `stop live` (`instr ctl`, `instr.Control`): live objects counted from a moment
//! while the program runs, for an agent loaded without `live=`.
//!
//! The probes cannot take this up: whether they tag objects is fixed in HeapProxy's constants when it is
//! engaged, and the JIT folds those into every allocation it compiles. The JVM's heap sampler cannot
//! either: each thread's next sample point was drawn before the start, so a thread that existed then
//! goes unsampled for its first few hundred kilobytes even at interval 0. So nothing runs at allocation
//! time; live objects are counted from the heap itself, exactly:
//!
//! - at the start, after a full GC, a heap walk (IterateThroughHeap over the untagged objects) tags every
//!   object alive with `Owner::Before` and its class's number (live.rs): these are the objects from
//!   before profiling, counted one for one and counted down by OBJECT_FREE as they are collected;
//! - at each report, after the report's full GC, a walk over the objects still untagged counts, per
//!   class, those allocated since the start and alive now, without tagging them.
//!
//! Classes are numbered by tagging their mirrors (heap_sampling.rs), since the walk may call no JVMTI
//! function and finds an object's class only as its class's tag. `stop live` disables OBJECT_FREE and
//! takes every live tag off again (a second walk), so nothing of it stays in the JVM but the mirrors'
//! numbers, kept so that a class is numbered once for the life of the VM.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

use crate::ffi::Jni;
use crate::jvmti::{capability, HeapObjects, ERROR_NONE};
use crate::live::{self, Live, Owner, Sampling};
use crate::state::{lock, Agent};

/// The tracker `start live` made (kept across stop and start: its class numbers are the mirrors' tags).
static RUNTIME: OnceLock<Live> = OnceLock::new();
static ON: AtomicBool = AtomicBool::new(false);
/// One switch or census at a time: the socket's thread and the Java API may ask together.
static SWITCHING: Mutex<()> = Mutex::new(());
/// Walks at the start: a class loaded between numbering the classes and the walk leaves its objects
/// untagged, and the walk is made again for them.
const WALKS: usize = 3;

/// The live tracker OBJECT_FREE counts down: the one chosen at load (`live=`), or that of `start live`.
pub fn tracker(a: &Agent) -> Option<&Live> {
    a.live.as_ref().or_else(|| {
        if ON.load(Ordering::Acquire) {
            RUNTIME.get()
        } else {
            None
        }
    })
}

/// Whether `start live` has live counting on now.
pub fn is_on() -> bool {
    ON.load(Ordering::Acquire)
}

/// `start live`.
pub fn start(a: &Agent, jni: Jni) -> Result<String, String> {
    let _one_at_a_time = lock(&SWITCHING);
    loaded_without_live(a)?;
    if is_on() {
        return Ok("live was already on".into());
    }
    a.jvmti.add_live_capabilities(
        &[
            capability::TAG_OBJECTS,
            capability::GENERATE_OBJECT_FREE_EVENTS,
        ],
        "live counting",
    )?;
    // Sampling::Bytes: the numbering of classes by mirror tags; interval 0 weighs nothing.
    let live =
        RUNTIME.get_or_init(|| Live::new(Sampling::Bytes(0), 0, crate::CLASS_SLOTS as usize));
    let started = Instant::now();
    // Frees are counted from before the walk tags anything.
    if crate::object_free::set_enabled(a.jvmti, true) != ERROR_NONE {
        return Err("cannot enable the JVMTI ObjectFree event".into());
    }
    ON.store(true, Ordering::Release);
    // Garbage would be counted as alive until the next collection.
    a.jvmti.force_garbage_collection();
    let (mut objects, mut bytes, mut missed) = (0u64, 0u64, 0u64);
    for _ in 0..WALKS {
        number_loaded_classes(a, jni, live);
        missed = 0;
        a.jvmti.retag_heap(
            HeapObjects::Untagged,
            |class_tag, size, tag| match live::mirror_number(class_tag) {
                Some(n) => {
                    let t = live::encode(Owner::Before(n), size);
                    live.tagged(t);
                    objects += 1;
                    bytes += size.max(0) as u64;
                    t
                }
                None => {
                    missed += 1;
                    tag
                }
            },
        );
        if missed == 0 {
            break;
        }
    }
    let mut said = format!(
        "live on: {objects} objects, {bytes} bytes from before profiling, in {} ms",
        started.elapsed().as_millis()
    );
    if missed > 0 {
        said.push_str(&format!(
            "; {missed} objects of classes loaded during the walk not counted"
        ));
    }
    Ok(said)
}

/// `stop live`.
pub fn stop(a: &Agent) -> Result<String, String> {
    let _one_at_a_time = lock(&SWITCHING);
    loaded_without_live(a)?;
    if !is_on() {
        return Ok("live was already off".into());
    }
    let mut removed = 0u64;
    a.jvmti.retag_heap(HeapObjects::Tagged, |_, _, tag| {
        if live::decode(tag).is_some() {
            removed += 1;
            0
        } else {
            tag
        }
    });
    // The XML trace's allocation records use ObjectFree too.
    let t = a.rules.threads();
    if !(t.enabled && t.trace.is_some() && t.trace_allocations) {
        crate::object_free::set_enabled(a.jvmti, false);
    }
    ON.store(false, Ordering::Release);
    if let Some(live) = RUNTIME.get() {
        live.clear();
    }
    Ok(format!("live off: {removed} tags removed"))
}

/// What the report shows while `start live` is on, per class name: the objects from before profiling
/// still alive, and those allocated since and alive now. Called after the report's full GC and the walk
/// that has the VM post its pending OBJECT_FREE events (report.rs, `settle_live`).
pub struct Census {
    pub before: HashMap<String, (u64, u64)>,
    pub since: HashMap<String, (u64, u64)>,
}

pub fn census(a: &Agent, jni: Jni) -> Option<Census> {
    let _one_at_a_time = lock(&SWITCHING);
    if !is_on() {
        return None;
    }
    let live = RUNTIME.get()?;
    number_loaded_classes(a, jni, live);
    let mut by_number: HashMap<u32, (u64, u64)> = HashMap::new();
    a.jvmti
        .retag_heap(HeapObjects::Untagged, |class_tag, size, tag| {
            if let Some(n) = live::mirror_number(class_tag) {
                let e = by_number.entry(n).or_default();
                e.0 += 1;
                e.1 += size.max(0) as u64;
            }
            tag
        });
    let names = live.class_names();
    let mut since: HashMap<String, (u64, u64)> = HashMap::new();
    for (n, (count, bytes)) in by_number {
        if let Some(name) = names.get(n as usize) {
            let e = since.entry(name.clone()).or_default();
            e.0 += count;
            e.1 += bytes;
        }
    }
    Some(Census {
        before: live.before_by_class(),
        since,
    })
}

fn loaded_without_live(a: &Agent) -> Result<(), String> {
    match &a.live {
        Some(_) => Err(
            "live: live tracking was chosen when the agent loaded (live=...); it runs for the life of the VM"
                .into(),
        ),
        None => Ok(()),
    }
}

/// Gives every loaded class its number (its mirror's tag), so that a heap walk, which may call no JVMTI
/// function, finds each object's class number in its class's tag.
fn number_loaded_classes(a: &Agent, jni: Jni, live: &Live) {
    for class in a.jvmti.loaded_classes() {
        // A class whose mirror the walk found before the class was loaded (CDS keeps the mirrors of its
        // archived classes in the heap): the mirror stops counting as an object from before profiling.
        let tag = a.jvmti.tag(class);
        if let Some((Owner::Before(_), _)) = live::decode(tag) {
            live.freed(tag);
            a.jvmti.set_tag(class, 0);
        }
        let _ = crate::heap_sampling::class_number(a, live, class);
        jni.delete_local(class);
    }
}
