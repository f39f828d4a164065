//! Live objects: counts and bytes of the tagged objects not yet freed, per allocation site (or per
//! class when the rules record no sites, at depth 0).
//!
//! Everything the bookkeeping needs is in the tag itself, so that OBJECT_FREE, which may call no JNI
//! and no tag function, only decodes a number and subtracts from fixed counters:
//!
//! ```text
//! bit 62      reserved: objects tagged by the XML trace
//! bit 61      1: `id` is a class's dense index (HeapProxyAllocs); 0: `id` is a rewriter site id
//! bits 40-60  id
//! bits 0-39   the object's size in bytes (capped at 2^40 - 1)
//! ```
//!
//! The counters are fixed arrays of atomics sized once, when live tracking is switched on: nothing is
//! allocated, locked or queued on the free path, so there is nothing to drain later either.

use std::sync::atomic::{AtomicI64, Ordering};

/// Tags with this bit belong to another consumer (the XML trace) and are ignored here.
pub const FOREIGN_TAG: i64 = 1 << 62;
const CLASS_TAG: i64 = 1 << 61;
const ID_SHIFT: u32 = 40;
const ID_MASK: i64 = (1 << 21) - 1;
const BYTES_MASK: i64 = (1 << ID_SHIFT) - 1;

/// What a tag counts against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Owner {
    Site(u32),
    ClassSlot(u32),
}

pub fn encode(owner: Owner, bytes: i64) -> i64 {
    let (flag, id) = match owner {
        Owner::Site(id) => (0, id),
        Owner::ClassSlot(slot) => (CLASS_TAG, slot),
    };
    flag | ((id as i64 & ID_MASK) << ID_SHIFT) | bytes.clamp(0, BYTES_MASK)
}

pub fn decode(tag: i64) -> Option<(Owner, i64)> {
    if tag <= 0 || tag & FOREIGN_TAG != 0 {
        return None;
    }
    let id = ((tag >> ID_SHIFT) & ID_MASK) as u32;
    let owner = if tag & CLASS_TAG != 0 {
        Owner::ClassSlot(id)
    } else {
        Owner::Site(id)
    };
    Some((owner, tag & BYTES_MASK))
}

#[derive(Default)]
struct Counter {
    count: AtomicI64,
    bytes: AtomicI64,
}

pub struct Live {
    /// One object in `every` is tagged (1: every object, exact).
    pub every: u32,
    sites: Box<[Counter]>,
    classes: Box<[Counter]>,
}

impl Live {
    pub fn new(every: u32, sites: usize, class_slots: usize) -> Live {
        let table = |n| (0..n).map(|_| Counter::default()).collect();
        Live {
            every,
            sites: table(sites),
            classes: table(class_slots),
        }
    }

    fn counter(&self, owner: Owner) -> Option<&Counter> {
        match owner {
            Owner::Site(id) => self.sites.get(id as usize),
            Owner::ClassSlot(slot) => self.classes.get(slot as usize),
        }
    }

    /// An object was tagged with `tag`.
    pub fn tagged(&self, tag: i64) {
        self.apply(tag, 1);
    }

    /// OBJECT_FREE: the object tagged `tag` was collected. Atomics only (no JNI, no lock).
    pub fn freed(&self, tag: i64) {
        self.apply(tag, -1);
    }

    fn apply(&self, tag: i64, sign: i64) {
        if let Some((owner, bytes)) = decode(tag) {
            if let Some(c) = self.counter(owner) {
                c.count.fetch_add(sign, Ordering::Relaxed);
                c.bytes.fetch_add(sign * bytes, Ordering::Relaxed);
            }
        }
    }

    /// Live objects and bytes of `owner`, scaled by the sampling interval.
    pub fn of(&self, owner: Owner) -> (u64, u64) {
        self.counter(owner).map_or((0, 0), |c| {
            let scale = self.every as u64;
            let count = c.count.load(Ordering::Relaxed).max(0) as u64;
            let bytes = c.bytes.load(Ordering::Relaxed).max(0) as u64;
            (count * scale, bytes * scale)
        })
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
        ] {
            assert_eq!(decode(encode(owner, 24)), Some((owner, 24)));
        }
        assert_eq!(
            decode(encode(Owner::Site(7), 1 << 45)).unwrap().1,
            BYTES_MASK
        );
        assert_eq!(decode(FOREIGN_TAG | 5), None);
        assert_eq!(decode(0), None);
        let live = Live::new(1, 8, 8);
        let tag = encode(Owner::Site(3), 16);
        live.tagged(tag);
        live.tagged(tag);
        live.freed(tag);
        assert_eq!(live.of(Owner::Site(3)), (1, 16));
        live.freed(FOREIGN_TAG | 3);
        assert_eq!(live.of(Owner::Site(3)), (1, 16));
    }
}
