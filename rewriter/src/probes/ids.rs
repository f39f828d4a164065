//! Method and allocation-site ids: small integers baked into the injected code, and the map back to
//! names that reports need.
//!
//! An id is assigned the first time its method (or site) is seen and is looked up, not reassigned, when
//! the same class is rewritten again (a retransform, or `rewrite-class` run twice in one process), so the
//! same class always gets the same bytes. The order of first sight decides the numbers; `rewrite-class`
//! visits inputs in sorted order, so its ids are reproducible run to run.

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::sync::Mutex;

use crate::pool_builder::{hash_bytes, BuildFastHash};

/// A method that has an id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MethodInfo {
    pub id: u32,
    /// Internal name, for example `java/lang/String`.
    pub class: String,
    pub name: String,
    pub descriptor: String,
    /// Its probes count calls but keep no shadow frame (a leaf in `CallProbes::TracedExceptLeaves`).
    pub counted_only: bool,
}

/// An allocation site: a `new`, `newarray`, `anewarray` or `multianewarray` instruction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SiteInfo {
    pub id: u32,
    /// Id of the method that contains the site.
    pub method: u32,
    /// Offset of the allocating instruction in the original method.
    pub pc: u32,
    /// Source line, when the class has a LineNumberTable.
    pub line: Option<u16>,
    /// Descriptor of the allocated type, for example `Ljava/util/ArrayList;`, `[I` or `[[Ljava/lang/String;`.
    pub allocated_type: String,
}

/// Names are kept as bytes in one arena and turned into `String`s only when read back, so that assigning
/// an id costs one allocation (the map key) for a method and none for a site.
#[derive(Default)]
struct Tables {
    /// Method ids by a 64-bit hash of `class NUL name NUL descriptor`; the key bytes live in `arena`
    /// and are compared on a hit. Hashes as keys keep growth cheap (no key is rehashed or re-read), and
    /// the rare second key with an equal hash goes to `collisions`.
    method_ids: HashMap<u64, u32, BuildFastHash>,
    collisions: Vec<(u64, u32)>,
    key: Vec<u8>,
    /// Per method id - 1: the range of its key in `arena`.
    methods: Vec<(u32, u32)>,
    /// Per method id - 1: whether its probes count calls only (see [`MethodInfo::counted_only`]).
    counted_only: Vec<bool>,
    /// Per method id - 1: its block of allocation-site ids (first id, count); (0, 0) until it has one.
    site_blocks: Vec<(u32, u32)>,
    /// Per site id - 1: method, pc, line (0: unknown), range of the allocated type in `arena`.
    sites: Vec<(u32, u32, u16, u32, u32)>,
    arena: Vec<u8>,
}

impl Tables {
    fn add_to_arena(&mut self, bytes: &[u8]) -> (u32, u32) {
        let start = self.arena.len() as u32;
        self.arena.extend_from_slice(bytes);
        (start, self.arena.len() as u32)
    }

    fn text(&self, (start, end): (u32, u32)) -> String {
        String::from_utf8_lossy(&self.arena[start as usize..end as usize]).into_owned()
    }

    fn method_info(&self, id: u32) -> Option<MethodInfo> {
        let (start, end) = *self.methods.get(id.checked_sub(FIRST_ID)? as usize)?;
        let key = &self.arena[start as usize..end as usize];
        let mut parts = key
            .split(|&b| b == 0)
            .map(|p| String::from_utf8_lossy(p).into_owned());
        Some(MethodInfo {
            id,
            class: parts.next().unwrap_or_default(),
            name: parts.next().unwrap_or_default(),
            descriptor: parts.next().unwrap_or_default(),
            counted_only: self.counted_only[(id - FIRST_ID) as usize],
        })
    }

    fn site_info(&self, id: u32) -> Option<SiteInfo> {
        let &(method, pc, line, start, end) = self.sites.get(id.checked_sub(FIRST_ID)? as usize)?;
        Some(SiteInfo {
            id,
            method,
            pc,
            line: (line != 0).then_some(line),
            allocated_type: self.text((start, end)),
        })
    }
}

/// Thread-safe: the agent rewrites classes on whichever threads load them.
#[derive(Default)]
pub struct IdRegistry {
    tables: Mutex<Tables>,
}

/// Ids start at 1 so that 0 can mean "none" on the agent side.
const FIRST_ID: u32 = 1;

impl IdRegistry {
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Tables> {
        // A panic while holding the lock leaves plain data behind, still consistent enough to read.
        self.tables.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn method_id(&self, class: &[u8], name: &[u8], descriptor: &[u8]) -> u32 {
        let mut guard = self.lock();
        let t = &mut *guard;
        t.key.clear();
        for (k, part) in [class, name, descriptor].into_iter().enumerate() {
            if k > 0 {
                t.key.push(0);
            }
            t.key.extend_from_slice(part);
        }
        let hash = hash_bytes(&t.key);
        let is_key = |t: &Tables, id: u32| {
            let (start, end) = t.methods[(id - FIRST_ID) as usize];
            t.arena[start as usize..end as usize] == t.key[..]
        };
        let id = FIRST_ID + t.methods.len() as u32;
        // One probe of the table whether the method is new (the usual case) or known.
        match t.method_ids.entry(hash) {
            Entry::Vacant(slot) => {
                slot.insert(id);
            }
            Entry::Occupied(slot) => {
                let first = *slot.get();
                if is_key(t, first) {
                    return first;
                }
                if let Some(&(_, known)) = t
                    .collisions
                    .iter()
                    .find(|&&(h, known)| h == hash && is_key(t, known))
                {
                    return known;
                }
                t.collisions.push((hash, id));
            }
        }
        let key = std::mem::take(&mut t.key);
        let range = t.add_to_arena(&key);
        t.key = key;
        t.methods.push(range);
        t.counted_only.push(false);
        id
    }

    /// Records that the probes of method `id` count its calls but keep no shadow frame, so that reports
    /// can tell "not timed" from "took no time".
    pub fn set_counted_only(&self, id: u32) {
        if let Some(flag) = self
            .lock()
            .counted_only
            .get_mut(id.wrapping_sub(FIRST_ID) as usize)
        {
            *flag = true;
        }
    }

    /// The ids of the `count` allocation sites of method `method`, a block of consecutive ids: the first is
    /// returned, site k of the method (in code order) is `first + k`. The block is made the first time
    /// (then `describe(k, buffer)` appends site k's allocated type to the buffer and returns its pc and line)
    /// and found again when the same method is rewritten again. One lock and no hashing per site.
    pub fn site_ids(
        &self,
        method: u32,
        count: u32,
        mut describe: impl FnMut(u32, &mut Vec<u8>) -> (u32, Option<u16>),
    ) -> u32 {
        let mut guard = self.lock();
        let t = &mut *guard;
        let Some(slot) = method.checked_sub(FIRST_ID).map(|m| m as usize) else {
            return 0;
        };
        if t.site_blocks.len() <= slot {
            t.site_blocks.resize(slot + 1, (0, 0));
        }
        let (first, n) = t.site_blocks[slot];
        if n == count && first != 0 {
            return first;
        }
        let first = FIRST_ID + t.sites.len() as u32;
        for k in 0..count {
            let start = t.arena.len() as u32;
            let (pc, line) = describe(k, &mut t.arena);
            let end = t.arena.len() as u32;
            t.sites.push((method, pc, line.unwrap_or(0), start, end));
        }
        t.site_blocks[slot] = (first, count);
        first
    }

    /// Every method with an id, in id order.
    pub fn methods(&self) -> Vec<MethodInfo> {
        let t = self.lock();
        (0..t.methods.len() as u32)
            .filter_map(|k| t.method_info(FIRST_ID + k))
            .collect()
    }

    /// Every allocation site, in id order.
    pub fn sites(&self) -> Vec<SiteInfo> {
        let t = self.lock();
        (0..t.sites.len() as u32)
            .filter_map(|k| t.site_info(FIRST_ID + k))
            .collect()
    }

    pub fn method(&self, id: u32) -> Option<MethodInfo> {
        self.lock().method_info(id)
    }

    pub fn site(&self, id: u32) -> Option<SiteInfo> {
        self.lock().site_info(id)
    }

    pub fn method_count(&self) -> usize {
        self.lock().methods.len()
    }

    pub fn site_count(&self) -> usize {
        self.lock().sites.len()
    }

    /// The map as tab-separated text: `method<TAB>id<TAB>class<TAB>name<TAB>descriptor`,
    /// `counted<TAB>id` for a method whose calls are counted only, and
    /// `site<TAB>id<TAB>method id<TAB>pc<TAB>line<TAB>allocated type` lines (line `-` when unknown).
    pub fn to_tsv(&self) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        for m in self.methods() {
            let _ = writeln!(
                s,
                "method\t{}\t{}\t{}\t{}",
                m.id, m.class, m.name, m.descriptor
            );
            if m.counted_only {
                let _ = writeln!(s, "counted\t{}", m.id);
            }
        }
        for site in self.sites() {
            let line = site.line.map_or("-".to_string(), |l| l.to_string());
            let _ = writeln!(
                s,
                "site\t{}\t{}\t{}\t{}\t{}",
                site.id, site.method, site.pc, line, site.allocated_type
            );
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_stable_for_the_same_key() {
        let r = IdRegistry::new();
        let a = r.method_id(b"A", b"f", b"()V");
        let b = r.method_id(b"A", b"g", b"()V");
        assert_eq!((a, b), (1, 2));
        assert_eq!(r.method_id(b"A", b"f", b"()V"), 1);
        let s = r.site_ids(a, 2, |k, out| {
            out.extend_from_slice(b"[I");
            (7 + k, Some(3))
        });
        assert_eq!(r.site_ids(a, 2, |_, _| unreachable!()), s);
        assert_eq!(r.site(s).unwrap().line, Some(3));
        assert_eq!(r.site(s + 1).unwrap().pc, 8);
        assert!(r.site(s + 2).is_none());
        assert_eq!(r.method(2).unwrap().name, "g");
        assert!(r.method(0).is_none());
    }
}
