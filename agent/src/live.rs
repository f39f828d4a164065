//! Live objects: counts and bytes of the tagged objects not yet freed, per allocation site (or per
//! class when the rules record no sites, at depth 0).
//!
//! Two ways to choose the tagged objects:
//! - the probes tag one object in N of each class or site (`live=N`; N = 1 is exact), and reports
//!   scale the counts by N;
//! - the JVM's heap sampler (`live=512k`, JVMTI SampledObjectAlloc) picks about one object per
//!   interval of allocated bytes, with probability 1 - exp(-size / interval) for an object of `size`
//!   bytes; each sample then stands for the inverse of that probability in objects. The probes do no
//!   live work at all, so that allocations C2 would scalar-replace stay unallocated (a probe that may
//!   pass the object to a native call makes every inlined allocation escape; bench/README.md).
//!
//! Everything the bookkeeping needs is in the tag itself, so that OBJECT_FREE, which may call no JNI
//! and no tag function, only decodes a number and subtracts from fixed counters:
//!
//! ```text
//! bit 62      reserved: objects tagged by the XML trace
//! bit 61      1: `id` is a class's dense index (HeapProxyAllocs)
//! bit 60      1: `id` is a class the heap sampler met (this module's own numbering)
//!             bits 61 and 60 together: the tag of a class mirror, holding that number; never counted
//!             bit 60 alone with the id's top bit (59) set: an object found by the heap walk of `start
//!             live` (live_switch.rs), allocated before profiling; the rest of the id is its class's
//!             number as above
//! (neither)   `id` is a rewriter site id
//! bits 40-59  id
//! bits 0-39   the object's size in bytes (capped at 2^40 - 1)
//! ```
//!
//! The counters are fixed arrays of atomics sized once, when live tracking is switched on: nothing is
//! allocated, locked or queued on the free path, so there is nothing to drain later either.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Mutex;

use crate::state::lock;

/// Tags with this bit belong to another consumer (the XML trace) and are ignored here.
pub const FOREIGN_TAG: i64 = 1 << 62;
const CLASS_TAG: i64 = 1 << 61;
const SAMPLED_CLASS_TAG: i64 = 1 << 60;
const MIRROR_TAG: i64 = CLASS_TAG | SAMPLED_CLASS_TAG;
const ID_SHIFT: u32 = 40;
const ID_MASK: i64 = (1 << 20) - 1;
/// In a heap-sampled class's id: the object was there before profiling (class numbers stay below it).
const BEFORE_BIT: u32 = 1 << 19;
const BYTES_MASK: i64 = (1 << ID_SHIFT) - 1;
/// Heap-sampled counts are kept in 1/WEIGHT_UNIT objects, so that weights need no floating point
/// on the free path and add up without drift.
const WEIGHT_UNIT: f64 = 1024.0;

/// How many objects, in 1/WEIGHT_UNIT, one heap sample of an object of `bytes` stands for: the heap
/// sampler picks it with probability 1 - exp(-bytes / interval).
pub fn sample_weight(bytes: i64, interval: u32) -> i64 {
    let p = -(-(bytes.max(1) as f64) / interval as f64).exp_m1();
    (WEIGHT_UNIT / p).round() as i64
}

/// What a tag counts against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Owner {
    Site(u32),
    ClassSlot(u32),
    /// A class numbered by `Live::sampled_class` (heap sampling).
    SampledClass(u32),
    /// An object of that class already alive when live tracking started (live_switch.rs): counted one
    /// for one whatever the sampling, and only ever counted down.
    Before(u32),
}

/// How the tagged objects are chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sampling {
    /// One object in N (1: every object) by the probes.
    Every(u32),
    /// The JVM's heap sampler, one sample per this many bytes on average.
    Bytes(u32),
}

pub fn encode(owner: Owner, bytes: i64) -> i64 {
    let (flag, id) = match owner {
        Owner::Site(id) => (0, id),
        Owner::ClassSlot(slot) => (CLASS_TAG, slot),
        Owner::SampledClass(id) => (SAMPLED_CLASS_TAG, id & !BEFORE_BIT),
        Owner::Before(id) => (SAMPLED_CLASS_TAG, id | BEFORE_BIT),
    };
    flag | ((id as i64 & ID_MASK) << ID_SHIFT) | bytes.clamp(0, BYTES_MASK)
}

pub fn decode(tag: i64) -> Option<(Owner, i64)> {
    if tag <= 0 || tag & FOREIGN_TAG != 0 || tag & MIRROR_TAG == MIRROR_TAG {
        return None;
    }
    let id = ((tag >> ID_SHIFT) & ID_MASK) as u32;
    let owner = if tag & CLASS_TAG != 0 {
        Owner::ClassSlot(id)
    } else if tag & SAMPLED_CLASS_TAG != 0 && id & BEFORE_BIT != 0 {
        Owner::Before(id & !BEFORE_BIT)
    } else if tag & SAMPLED_CLASS_TAG != 0 {
        Owner::SampledClass(id)
    } else {
        Owner::Site(id)
    };
    Some((owner, tag & BYTES_MASK))
}

/// The number a class mirror's tag holds, if `tag` is one.
pub fn mirror_number(tag: i64) -> Option<u32> {
    (tag > 0 && tag & FOREIGN_TAG == 0 && tag & MIRROR_TAG == MIRROR_TAG)
        .then_some(((tag >> ID_SHIFT) & ID_MASK) as u32)
}

/// The tag that gives a class mirror its number.
pub fn mirror_tag(number: u32) -> i64 {
    MIRROR_TAG | ((number as i64 & ID_MASK) << ID_SHIFT)
}

#[derive(Default)]
struct Counter {
    count: AtomicI64,
    bytes: AtomicI64,
}

pub struct Live {
    pub sampling: Sampling,
    sites: Box<[Counter]>,
    classes: Box<[Counter]>,
    /// Heap sampling: counters and Java names of the classes met, by their number.
    sampled: Box<[Counter]>,
    sampled_names: Mutex<Vec<String>>,
    /// Objects from before profiling, by the same class numbers (live tracking started at run time).
    before: Box<[Counter]>,
}

impl Live {
    pub fn new(sampling: Sampling, sites: usize, class_slots: usize) -> Live {
        let table = |n| (0..n).map(|_| Counter::default()).collect();
        let (sites, classes, sampled) = match sampling {
            Sampling::Every(_) => (sites, class_slots, 0),
            Sampling::Bytes(_) => (0, 0, class_slots),
        };
        Live {
            sampling,
            sites: table(sites),
            classes: table(classes),
            sampled: table(sampled),
            sampled_names: Mutex::new(Vec::new()),
            before: table(sampled),
        }
    }

    fn counter(&self, owner: Owner) -> Option<&Counter> {
        match owner {
            Owner::Site(id) => self.sites.get(id as usize),
            Owner::ClassSlot(slot) => self.classes.get(slot as usize),
            Owner::SampledClass(n) => self.sampled.get(n as usize),
            Owner::Before(n) => self.before.get(n as usize),
        }
    }

    /// Numbers a class the heap sampler met for the first time (`name` in Java form); None when the
    /// table is full.
    pub fn number_class(&self, name: String) -> Option<u32> {
        let mut names = lock(&self.sampled_names);
        if names.len() >= self.sampled.len() {
            return None;
        }
        names.push(name);
        Some(names.len() as u32 - 1)
    }

    /// An object was tagged with `tag`.
    pub fn tagged(&self, tag: i64) {
        self.apply(tag, 1);
    }

    /// OBJECT_FREE: the object tagged `tag` was collected. Atomics only (no JNI, no lock).
    pub fn freed(&self, tag: i64) {
        self.apply(tag, -1);
    }

    /// What one tagged object of `bytes` counts for: objects (in 1/WEIGHT_UNIT under heap sampling)
    /// and bytes (likewise).
    fn weight(&self, owner: Owner, bytes: i64) -> (i64, i64) {
        if let Owner::Before(_) = owner {
            return (1, bytes);
        }
        match self.sampling {
            Sampling::Every(_) => (1, bytes),
            Sampling::Bytes(interval) => {
                let w = sample_weight(bytes, interval);
                (w, w.saturating_mul(bytes))
            }
        }
    }

    fn apply(&self, tag: i64, sign: i64) {
        if let Some((owner, bytes)) = decode(tag) {
            if let Some(c) = self.counter(owner) {
                let (n, b) = self.weight(owner, bytes);
                c.count.fetch_add(sign * n, Ordering::Relaxed);
                c.bytes.fetch_add(sign * b, Ordering::Relaxed);
            }
        }
    }

    /// Live objects and bytes of `owner`, scaled to estimates of the whole.
    pub fn of(&self, owner: Owner) -> (u64, u64) {
        self.counter(owner).map_or((0, 0), |c| {
            let count = c.count.load(Ordering::Relaxed).max(0) as u64;
            let bytes = c.bytes.load(Ordering::Relaxed).max(0) as u64;
            if let Owner::Before(_) = owner {
                return (count, bytes);
            }
            match self.sampling {
                Sampling::Every(n) => (count * n as u64, bytes * n as u64),
                Sampling::Bytes(_) => {
                    let unit = |x: u64| (x as f64 / WEIGHT_UNIT).round() as u64;
                    (unit(count), unit(bytes))
                }
            }
        })
    }

    /// Heap sampling: live objects and bytes per class name (classes of one name from several loaders
    /// added together).
    pub fn by_sampled_class(&self) -> std::collections::HashMap<String, (u64, u64)> {
        self.by_class(Owner::SampledClass)
    }

    /// The names of the classes numbered so far, by number.
    pub fn class_names(&self) -> Vec<String> {
        lock(&self.sampled_names).clone()
    }

    /// The objects from before profiling still alive, per class name (live_switch.rs).
    pub fn before_by_class(&self) -> std::collections::HashMap<String, (u64, u64)> {
        let mut out = self.by_class(Owner::Before);
        out.retain(|_, v| *v != (0, 0));
        out
    }

    fn by_class(&self, owner: fn(u32) -> Owner) -> std::collections::HashMap<String, (u64, u64)> {
        let mut out = std::collections::HashMap::new();
        for (n, name) in lock(&self.sampled_names).iter().enumerate() {
            let (count, bytes) = self.of(owner(n as u32));
            let e: &mut (u64, u64) = out.entry(name.clone()).or_default();
            e.0 += count;
            e.1 += bytes;
        }
        out
    }

    /// Every counter back to zero (`stop live`, once the tags they counted are gone); class numbers stay.
    pub fn clear(&self) {
        for c in self
            .sites
            .iter()
            .chain(&*self.classes)
            .chain(&*self.sampled)
            .chain(&*self.before)
        {
            c.count.store(0, Ordering::Relaxed);
            c.bytes.store(0, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_round_trip_and_foreign_tags_are_ignored() {
        for owner in [
            Owner::Site(1),
            Owner::Site((1 << 20) - 1),
            Owner::ClassSlot(65535),
            Owner::SampledClass(70000),
        ] {
            assert_eq!(decode(encode(owner, 24)), Some((owner, 24)));
        }
        assert_eq!(
            decode(encode(Owner::Site(7), 1 << 45)).unwrap().1,
            BYTES_MASK
        );
        assert_eq!(decode(FOREIGN_TAG | 5), None);
        assert_eq!(decode(0), None);
        assert_eq!(decode(mirror_tag(9)), None);
        assert_eq!(mirror_number(mirror_tag(9)), Some(9));
        assert_eq!(mirror_number(encode(Owner::SampledClass(9), 24)), None);
        assert_eq!(
            decode(encode(Owner::Before(9), 24)),
            Some((Owner::Before(9), 24))
        );
        assert_ne!(
            encode(Owner::Before(9), 24),
            encode(Owner::SampledClass(9), 24)
        );
        let live = Live::new(Sampling::Every(1), 8, 8);
        let tag = encode(Owner::Site(3), 16);
        live.tagged(tag);
        live.tagged(tag);
        live.freed(tag);
        assert_eq!(live.of(Owner::Site(3)), (1, 16));
        live.freed(FOREIGN_TAG | 3);
        assert_eq!(live.of(Owner::Site(3)), (1, 16));
    }
}

#[cfg(test)]
mod heap_sampling_tests {
    use super::*;

    #[test]
    fn samples_stand_for_the_inverse_of_their_probability() {
        let live = Live::new(Sampling::Bytes(1 << 20), 8, 8);
        let n = live.number_class("a.Small".into()).unwrap();
        assert_eq!(live.number_class("a.Big".into()), Some(n + 1));
        // A 16-byte object is sampled with probability about 16 / 2^20: one stands for 65536.5.
        let small = encode(Owner::SampledClass(n), 16);
        live.tagged(small);
        live.tagged(small);
        let (count, bytes) = live.of(Owner::SampledClass(n));
        assert!((131_072..=131_074).contains(&count), "{count}");
        assert!((2_097_160..=2_097_170).contains(&bytes), "{bytes}");
        // An object far larger than the interval is always sampled: it stands for itself.
        let big = encode(Owner::SampledClass(n + 1), 64 << 20);
        live.tagged(big);
        assert_eq!(live.of(Owner::SampledClass(n + 1)), (1, 64 << 20));
        live.freed(small);
        live.freed(small);
        live.freed(big);
        assert_eq!(live.of(Owner::SampledClass(n)), (0, 0));
        assert_eq!(live.by_sampled_class()["a.Big"], (0, 0));
        // Objects from before profiling count one for one, apart from the samples of their class.
        let before = encode(Owner::Before(n), 16);
        live.tagged(before);
        live.tagged(before);
        live.freed(before);
        assert_eq!(live.before_by_class()["a.Small"], (1, 16));
        assert!(!live.before_by_class().contains_key("a.Big"));
        assert_eq!(live.by_sampled_class()["a.Small"], (0, 0));
        live.clear();
        assert!(live.before_by_class().is_empty());
    }
}
