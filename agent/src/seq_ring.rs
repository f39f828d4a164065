//! The protocol of the agent's preallocated, lock-free rings (event_ring.rs for GC and free events,
//! sample_ring.rs for the sampler's stacks): for producers that may not allocate, lock or block. A
//! producer claims a slot with one CAS and publishes it with one store; when the ring is full it gets
//! `false` (and counts the drop itself), never a wait.
//!
//! Each slot carries a sequence number that says whose turn it is: `pos` when free for the producer of
//! position `pos`, `pos + 1` once that producer has written it, `pos + capacity` once the consumer has
//! read it (free for the next lap). So a producer never overwrites an unread slot and the consumer never
//! reads a half-written one: a claimed but unpublished slot stops the drain, which resumes from it next
//! time. A slot's body is made of atomics written with relaxed stores, published by the release store of
//! the sequence number, so that none of this needs `unsafe`.
//!
//! Any number of producers; one consumer at a time (the callers serialise `drain`).

use std::sync::atomic::{AtomicU64, Ordering};

struct Slot<B> {
    seq: AtomicU64,
    body: B,
}

pub struct SeqRing<B> {
    slots: Box<[Slot<B>]>,
    mask: u64,
    /// Next position a producer claims.
    tail: AtomicU64,
    /// Next position the consumer reads (only the consumer writes it).
    head: AtomicU64,
}

impl<B> SeqRing<B> {
    /// A ring of `capacity` slots, rounded up to a power of two (at least 2), each body made by `body`.
    /// All memory is taken here, once.
    pub fn new(capacity: usize, mut body: impl FnMut() -> B) -> SeqRing<B> {
        let n = capacity.max(2).next_power_of_two();
        SeqRing {
            slots: (0..n as u64)
                .map(|i| Slot {
                    seq: AtomicU64::new(i),
                    body: body(),
                })
                .collect(),
            mask: n as u64 - 1,
            tail: AtomicU64::new(0),
            head: AtomicU64::new(0),
        }
    }

    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// Claims a slot and lets `write` fill its body (relaxed stores), then publishes it; false when the
    /// ring is full. Never allocates, locks or waits (a failed CAS only means another producer took the
    /// slot first; the retry looks at the next one).
    pub fn push(&self, write: impl FnOnce(&B)) -> bool {
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
                        write(&slot.body);
                        // Publishes the body to the consumer's Acquire load of `seq`.
                        slot.seq.store(pos + 1, Ordering::Release);
                        return true;
                    }
                    Err(now) => pos = now,
                }
            } else if seq < pos {
                // The slot still holds the previous lap's record: full.
                return false;
            } else {
                // Another producer claimed `pos` already.
                pos = self.tail.load(Ordering::Relaxed);
            }
        }
    }

    /// Hands every published body to `read` (relaxed loads), oldest first, and frees their slots. Stops at
    /// the first slot claimed but not yet published. Callers must not drain concurrently.
    pub fn drain(&self, mut read: impl FnMut(&B)) -> usize {
        let mut pos = self.head.load(Ordering::Relaxed);
        let start = pos;
        loop {
            let slot = &self.slots[(pos & self.mask) as usize];
            if slot.seq.load(Ordering::Acquire) != pos + 1 {
                break;
            }
            read(&slot.body);
            // Frees the slot for the producer of the next lap, after the body was read.
            slot.seq.store(pos + self.mask + 1, Ordering::Release);
            pos += 1;
        }
        self.head.store(pos, Ordering::Relaxed);
        (pos - start) as usize
    }

    /// Whether a published or claimed slot is waiting.
    pub fn is_empty(&self) -> bool {
        self.tail.load(Ordering::Relaxed) == self.head.load(Ordering::Relaxed)
    }

    /// Slots waiting (claimed ones included).
    pub fn len(&self) -> usize {
        self.tail
            .load(Ordering::Relaxed)
            .saturating_sub(self.head.load(Ordering::Relaxed)) as usize
    }
}

/// For the rings' tests: `producers` threads each call `push(thread, i)` for every `i` below
/// `per_thread`, while the caller's `drain` runs over and over; once more after they are done.
#[cfg(test)]
pub(crate) fn hammer(
    producers: usize,
    per_thread: usize,
    push: impl Fn(usize, usize) + Sync,
    mut drain: impl FnMut(),
) {
    std::thread::scope(|scope| {
        let push = &push;
        let running: Vec<_> = (0..producers)
            .map(|t| scope.spawn(move || (0..per_thread).for_each(|i| push(t, i))))
            .collect();
        while running.iter().any(|p| !p.is_finished()) {
            drain();
        }
    });
    drain();
}
