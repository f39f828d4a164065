//! A preallocated, lock-free queue of small fixed-size records, for the callbacks that may not allocate,
//! lock or block: GarbageCollectionStart/Finish (VM thread, inside the pause) and ObjectFree (service
//! thread; no JNI). A producer claims a slot with one CAS and publishes it with one store; when the ring
//! is full the record is dropped and counted per kind, never waited for. Whoever drains it (the trace's
//! writer, or a Java thread queueing an element) formats the records afterwards, outside the callback.
//!
//! Each slot carries a sequence number that says whose turn it is: `pos` when free for the producer of
//! position `pos`, `pos + 1` once that producer has written it, `pos + capacity` once the consumer has
//! read it (free for the next lap). So a producer never overwrites an unread record and the consumer never
//! reads a half-written one: a claimed but unpublished slot stops the drain, which resumes from it next
//! time. The record's fields are atomics too, so that none of this needs `unsafe`.
//!
//! Any number of producers; one consumer at a time (the caller serialises `drain`, see xml_trace.rs).

use std::sync::atomic::{AtomicU64, Ordering};

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

struct Slot {
    seq: AtomicU64,
    kind: AtomicU64,
    time: AtomicU64,
    value: AtomicU64,
}

pub struct EventRing {
    slots: Box<[Slot]>,
    mask: u64,
    /// Next position a producer claims.
    tail: AtomicU64,
    /// Next position the consumer reads (only the consumer writes it).
    head: AtomicU64,
    dropped: [AtomicU64; KINDS],
}

impl EventRing {
    /// A ring of `capacity` records, rounded up to a power of two (at least 2). All memory is taken
    /// here, once.
    pub fn new(capacity: usize) -> EventRing {
        let n = capacity.max(2).next_power_of_two();
        EventRing {
            slots: (0..n as u64)
                .map(|i| Slot {
                    seq: AtomicU64::new(i),
                    kind: AtomicU64::new(0),
                    time: AtomicU64::new(0),
                    value: AtomicU64::new(0),
                })
                .collect(),
            mask: n as u64 - 1,
            tail: AtomicU64::new(0),
            head: AtomicU64::new(0),
            dropped: Default::default(),
        }
    }

    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// Records an event, or counts it as dropped when the ring is full. Never allocates, locks or waits
    /// (a failed CAS only means another producer took the slot first; the retry looks at the next one).
    pub fn push(&self, r: Record) -> bool {
        let mut pos = self.tail.load(Ordering::Relaxed);
        loop {
            let slot = &self.slots[(pos & self.mask) as usize];
            let seq = slot.seq.load(Ordering::Acquire);
            if seq == pos {
                match self.tail.compare_exchange_weak(
                    pos,
                    pos + 1,
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => {
                        slot.kind.store(r.kind as u64, Ordering::Relaxed);
                        slot.time.store(r.time, Ordering::Relaxed);
                        slot.value.store(r.value, Ordering::Relaxed);
                        // Publishes the fields above to the consumer's Acquire load of `seq`.
                        slot.seq.store(pos + 1, Ordering::Release);
                        return true;
                    }
                    Err(now) => pos = now,
                }
            } else if seq < pos {
                // The slot still holds the record of the previous lap: full.
                self.dropped[r.kind as usize].fetch_add(1, Ordering::Relaxed);
                return false;
            } else {
                // Another producer claimed `pos` already.
                pos = self.tail.load(Ordering::Relaxed);
            }
        }
    }

    /// Hands every published record to `f`, oldest first, and frees their slots. Stops at the first slot
    /// claimed but not yet published. Callers must not drain concurrently.
    pub fn drain(&self, mut f: impl FnMut(Record)) -> usize {
        let mut pos = self.head.load(Ordering::Relaxed);
        let start = pos;
        loop {
            let slot = &self.slots[(pos & self.mask) as usize];
            if slot.seq.load(Ordering::Acquire) != pos + 1 {
                break;
            }
            let r = Record {
                kind: Kind::from_u64(slot.kind.load(Ordering::Relaxed)),
                time: slot.time.load(Ordering::Relaxed),
                value: slot.value.load(Ordering::Relaxed),
            };
            // Frees the slot for the producer of the next lap, after the fields were read.
            slot.seq.store(pos + self.mask + 1, Ordering::Release);
            pos += 1;
            f(r);
        }
        self.head.store(pos, Ordering::Relaxed);
        (pos - start) as usize
    }

    /// Whether a published or claimed record is waiting.
    pub fn is_empty(&self) -> bool {
        self.tail.load(Ordering::Relaxed) == self.head.load(Ordering::Relaxed)
    }

    /// Records waiting (claimed ones included), for deciding when to wake the consumer.
    pub fn len(&self) -> usize {
        self.tail
            .load(Ordering::Relaxed)
            .saturating_sub(self.head.load(Ordering::Relaxed)) as usize
    }

    /// Records of `kind` dropped because the ring was full.
    pub fn dropped(&self, kind: Kind) -> u64 {
        self.dropped[kind as usize].load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

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
        let ring = Arc::new(EventRing::new(64));
        let per_thread = 20_000u64;
        let producers: Vec<_> = (0..4u64)
            .map(|t| {
                let ring = ring.clone();
                std::thread::spawn(move || {
                    for i in 0..per_thread {
                        ring.push(rec(Kind::ObjectFree, t << 32 | i));
                    }
                })
            })
            .collect();
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
        while producers.iter().any(|p| !p.is_finished()) {
            ring.drain(&mut check);
        }
        for p in producers {
            p.join().unwrap();
        }
        ring.drain(&mut check);
        assert_eq!(
            received + ring.dropped(Kind::ObjectFree),
            4 * per_thread,
            "every record is either received or counted as dropped"
        );
    }
}
