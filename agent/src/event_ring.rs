//! A preallocated, lock-free queue of small fixed-size records, for the callbacks that may not allocate,
//! lock or block: GarbageCollectionStart/Finish (VM thread, inside the pause) and ObjectFree (service
//! thread; no JNI). The claim/publish protocol is seq_ring.rs's; when the ring is full the record is
//! dropped and counted per kind, never waited for. Whoever drains it (the trace's writer, or a Java
//! thread queueing an element) formats the records afterwards, outside the callback.
//!
//! Any number of producers; one consumer at a time (the caller serialises `drain`, see xml_trace.rs).

use std::sync::atomic::{AtomicU64, Ordering};

use crate::seq_ring::SeqRing;

/// What a record reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    GcStart = 0,
    GcFinish = 1,
    /// `value` is the freed object's trace id.
    ObjectFree = 2,
}

const KINDS: usize = 3;

impl Kind {
    fn from_u64(k: u64) -> Kind {
        match k {
            0 => Kind::GcStart,
            1 => Kind::GcFinish,
            _ => Kind::ObjectFree,
        }
    }
}

/// One event: its kind, its time (ns since the agent loaded) and one value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record {
    pub kind: Kind,
    pub time: u64,
    pub value: u64,
}

/// A slot's record, as atomics (seq_ring.rs).
struct Body {
    kind: AtomicU64,
    time: AtomicU64,
    value: AtomicU64,
}

pub struct EventRing {
    ring: SeqRing<Body>,
    dropped: [AtomicU64; KINDS],
}

impl EventRing {
    /// A ring of `capacity` records, rounded up to a power of two (at least 2). All memory is taken
    /// here, once.
    pub fn new(capacity: usize) -> EventRing {
        EventRing {
            ring: SeqRing::new(capacity, || Body {
                kind: AtomicU64::new(0),
                time: AtomicU64::new(0),
                value: AtomicU64::new(0),
            }),
            dropped: Default::default(),
        }
    }

    pub fn capacity(&self) -> usize {
        self.ring.capacity()
    }

    /// Records an event, or counts it as dropped when the ring is full. Never allocates, locks or waits.
    pub fn push(&self, r: Record) -> bool {
        let pushed = self.ring.push(|b| {
            b.kind.store(r.kind as u64, Ordering::Relaxed);
            b.time.store(r.time, Ordering::Relaxed);
            b.value.store(r.value, Ordering::Relaxed);
        });
        if !pushed {
            self.dropped[r.kind as usize].fetch_add(1, Ordering::Relaxed);
        }
        pushed
    }

    /// Hands every published record to `f`, oldest first, and frees their slots. Stops at the first slot
    /// claimed but not yet published. Callers must not drain concurrently.
    pub fn drain(&self, mut f: impl FnMut(Record)) -> usize {
        self.ring.drain(|b| {
            f(Record {
                kind: Kind::from_u64(b.kind.load(Ordering::Relaxed)),
                time: b.time.load(Ordering::Relaxed),
                value: b.value.load(Ordering::Relaxed),
            })
        })
    }

    /// Whether a published or claimed record is waiting.
    pub fn is_empty(&self) -> bool {
        self.ring.is_empty()
    }

    /// Records waiting (claimed ones included), for deciding when to wake the consumer.
    pub fn len(&self) -> usize {
        self.ring.len()
    }

    /// Records of `kind` dropped because the ring was full.
    pub fn dropped(&self, kind: Kind) -> u64 {
        self.dropped[kind as usize].load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(kind: Kind, value: u64) -> Record {
        Record {
            kind,
            time: value * 10,
            value,
        }
    }

    #[test]
    fn full_ring_drops_and_counts_then_reuses_slots() {
        let ring = EventRing::new(3);
        assert_eq!(ring.capacity(), 4);
        for v in 0..4 {
            assert!(ring.push(rec(Kind::ObjectFree, v)));
        }
        assert!(!ring.push(rec(Kind::GcStart, 99)));
        assert!(!ring.push(rec(Kind::ObjectFree, 99)));
        assert_eq!(ring.dropped(Kind::GcStart), 1);
        assert_eq!(ring.dropped(Kind::ObjectFree), 1);
        assert_eq!(ring.dropped(Kind::GcFinish), 0);
        let mut seen = Vec::new();
        assert_eq!(ring.drain(|r| seen.push(r)), 4);
        assert_eq!(
            seen,
            (0..4).map(|v| rec(Kind::ObjectFree, v)).collect::<Vec<_>>()
        );
        assert!(ring.is_empty());
        // Second lap: the same slots again, kinds kept apart.
        assert!(ring.push(rec(Kind::GcStart, 5)));
        assert!(ring.push(rec(Kind::GcFinish, 6)));
        seen.clear();
        ring.drain(|r| seen.push(r));
        assert_eq!(seen, vec![rec(Kind::GcStart, 5), rec(Kind::GcFinish, 6)]);
        assert_eq!(ring.drain(|_| panic!("empty")), 0);
    }

    #[test]
    fn concurrent_producers_lose_nothing_uncounted() {
        let ring = EventRing::new(64);
        let per_thread = 20_000u64;
        // Each producer's records must come out in its own order, each once.
        let mut last = [None::<u64>; 4];
        let mut received = 0u64;
        let mut check = |r: Record| {
            let (t, i) = ((r.value >> 32) as usize, r.value & 0xffff_ffff);
            assert!(
                last[t].is_none_or(|l| i > l),
                "thread {t}: {i} after {:?}",
                last[t]
            );
            assert_eq!(r.time, r.value * 10);
            last[t] = Some(i);
            received += 1;
        };
        crate::seq_ring::hammer(
            4,
            per_thread as usize,
            |t, i| {
                ring.push(rec(Kind::ObjectFree, (t as u64) << 32 | i as u64));
            },
            || {
                ring.drain(&mut check);
            },
        );
        assert_eq!(
            received + ring.dropped(Kind::ObjectFree),
            4 * per_thread,
            "every record is either received or counted as dropped"
        );
    }
}
