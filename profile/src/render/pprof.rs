//! pprof: a gzipped `profile.proto` (github.com/google/pprof, `proto/profile.proto`), the format of
//! `go tool pprof`, Pyroscope, Parca and Grafana. One profile holds every view: one sample type per
//! [`FlameView`], in the views' order, the first the default.
//!
//! A sample is one stack, leaf first, with one value per sample type: a stack that is in several views
//! (the objects and bytes of an allocation site, the calls, CPU and wall time of a call path) is one
//! sample with a value in each, and 0 for the views it is not in. The values are instr's exact counts, so
//! the period is 1 (every event counted) and nothing is scaled when read back.
//!
//! A frame is a Function named as the flame graphs name it (`java.lang.String.valueOf`, the allocated
//! class as the leaf of an allocation stack) and one Location holding it; there is no line number,
//! address or mapping, which pprof readers accept: the names are already symbolised.
//!
//! The same views give the same bytes: strings, functions and samples are numbered in the order they are
//! first met, never in a hash map's order, and the gzip header carries no time or file name.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::io::Write as _;

use flate2::{Compression, Crc, GzBuilder};

use super::protobuf::Writer;
use crate::flame::{FlameFrame, FlameView};

/// The gzipped profile of `views`, compressed (what `instr report --format pprof` writes).
pub fn render(views: &[FlameView]) -> Vec<u8> {
    let mut gz = GzBuilder::new().write(Vec::new(), Compression::fast());
    gz.write_all(&encode(views))
        .expect("writing to a Vec cannot fail");
    gz.finish().expect("writing to a Vec cannot fail")
}

/// The profile of `views` in a gzip file of stored (uncompressed) blocks: what the agent writes at
/// exit as `PREFIX.pb.gz`. Compressing even at the fastest level took about 40 ms of CPU at 100,000
/// stacks, half of pprof's share of the exit, for a file a third smaller (5.0 MB against 7.5; the
/// other files at exit are ten times that); storing takes 2-5 ms. Every gzip reader takes it, and
/// `instr report --format pprof` of the JSON gives the compressed file.
pub fn render_stored(views: &[FlameView]) -> Vec<u8> {
    stored_gzip(&encode(views))
}

/// `data` as a gzip member (RFC 1952) of deflate stored blocks (RFC 1951, 3.2.4); the header has no
/// time and no name, so the bytes depend on `data` alone.
fn stored_gzip(data: &[u8]) -> Vec<u8> {
    const BLOCK: usize = 0xffff;
    let blocks = data.len().div_ceil(BLOCK).max(1);
    let mut out = Vec::with_capacity(data.len() + blocks * 5 + 18);
    out.extend_from_slice(&[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]);
    let mut chunks = data.chunks(BLOCK).peekable();
    if chunks.peek().is_none() {
        // An empty input is one empty final block.
        out.extend_from_slice(&[1, 0, 0, 0xff, 0xff]);
    }
    while let Some(chunk) = chunks.next() {
        out.push(u8::from(chunks.peek().is_none()));
        let len = chunk.len() as u16;
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&(!len).to_le_bytes());
        out.extend_from_slice(chunk);
    }
    let mut crc = Crc::new();
    crc.update(data);
    out.extend_from_slice(&crc.sum().to_le_bytes());
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    out
}

/// The `Profile` message of `views`, not compressed. pprof readers take it as is too; the tests compare
/// it, since compressed bytes would change with the compressor's version.
pub fn encode(views: &[FlameView]) -> Vec<u8> {
    Builder::new(views).write()
}

/// The pprof sample type (`type`, `unit`) of a view. The names are those pprof tools already know:
/// Go's heap profile's (`alloc_objects`, `alloc_space`, `inuse_objects`, `inuse_space`, which
/// `go tool pprof -sample_index` and its `-alloc_space`-style options select, and Pyroscope and Parca
/// show as memory profiles), `cpu` as in Go's CPU profile, `wall` as in Pyroscope's wall-clock profiles,
/// and Go's mutex/block profile's `contentions` and `delay` for monitor contention. A view of an id not
/// listed keeps its id as the type.
pub fn sample_type(view: &FlameView) -> (&'static str, &'static str) {
    let unit = pprof_unit(view.unit);
    let ty = match view.id {
        "objects" => "alloc_objects",
        "bytes" => "alloc_space",
        "live_objects" => "inuse_objects",
        "live_bytes" => "inuse_space",
        "calls" => "calls",
        "cpu" => "cpu",
        "wall" => "wall",
        // Monitor contention (a view to come): its time, or the number of contended entries.
        id if ["contention", "contended", "monitor"]
            .iter()
            .any(|w| id.contains(w)) =>
        {
            if unit == "count" {
                "contentions"
            } else {
                "delay"
            }
        }
        id => id,
    };
    (ty, unit)
}

/// pprof's units are `count`, `bytes` and time units; a view counting things (`objects`, `calls`)
/// counts them in `count`, which is what lets pprof tools pick the right scale and label.
fn pprof_unit(unit: &'static str) -> &'static str {
    match unit {
        "bytes" | "nanoseconds" | "microseconds" | "milliseconds" | "seconds" => unit,
        _ => "count",
    }
}

/// The tables of the profile, numbered as they are first met.
struct Builder<'a> {
    /// The string table; "" is index 0, as pprof requires.
    strings: Vec<&'a str>,
    string_index: Map<&'a str, u64>,
    /// (type, unit) string indexes, one per view.
    sample_types: Vec<(u64, u64)>,
    /// The name (string index) of each function; function `i` has id `i + 1`, and so has its location.
    functions: Vec<u64>,
    function_index: Map<&'a str, u64>,
    /// Location ids of each sample, leaf first, with the sample's index.
    samples: Samples,
    /// `values[i * types + t]`: sample `i`'s value of sample type `t`.
    values: Vec<u64>,
}

impl<'a> Builder<'a> {
    fn new(views: &'a [FlameView]) -> Builder<'a> {
        let mut b = Builder {
            strings: vec![""],
            string_index: Map::from_iter([("", 0)]),
            sample_types: Vec::with_capacity(views.len()),
            functions: Vec::new(),
            function_index: Map::default(),
            samples: Samples::default(),
            values: Vec::new(),
        };
        let mut used = Vec::new();
        for view in views {
            let (mut ty, unit) = sample_type(view);
            // Two views of one type name (a second contention view, say) would be ambiguous to
            // `-sample_index=NAME`: the second keeps its own id.
            if used.contains(&ty) {
                ty = view.id;
            }
            used.push(ty);
            let ty = b.string(ty);
            let unit = b.string(unit);
            b.sample_types.push((ty, unit));
        }
        let types = views.len();
        let mut key = Vec::new();
        // Function ids per frame of each view's frame table (0: not met yet), so a frame's name is
        // looked up once per table rather than once per stack; the views of a profile share one table.
        let mut tables: Vec<(*const FlameFrame, Vec<u64>)> = Vec::new();
        // The previous view's stacks and their samples, by position: views drawn from the same rows
        // (objects and bytes from the sites, calls, CPU and wall from the call paths) list the same
        // stacks (the same pointers) in the same order, so a stack is found there without turning it
        // into location ids and hashing them again. A stack not at its place is looked up by its ids.
        let mut previous: Vec<(usize, usize)> = Vec::new();
        // At most a sample per stack of each view not drawn from the previous one's rows (those share
        // its stacks): reserved at once, the hash table is not rehashed as it grows, 100,000 stacks
        // moved each time at random.
        let first = |v: &FlameView| v.stacks.first().map(|s| s.frames.as_ptr());
        let most: usize = views
            .iter()
            .enumerate()
            .filter(|&(t, v)| t == 0 || first(v) != first(&views[t - 1]))
            .map(|(_, v)| v.stacks.len())
            .sum();
        b.samples.by_hash.reserve(most);
        b.samples.starts.reserve(most + 1);
        b.samples.next.reserve(most);
        b.values.reserve(most * types);
        let mut current: Vec<(usize, usize)> = Vec::new();
        for (t, view) in views.iter().enumerate() {
            let ptr = view.frames.as_ptr();
            let table = match tables.iter().position(|(p, _)| *p == ptr) {
                Some(k) => k,
                None => {
                    tables.push((ptr, vec![0; view.frames.len()]));
                    tables.len() - 1
                }
            };
            current.clear();
            for (n, stack) in view.stacks.iter().enumerate() {
                // A stack of value 0 is no sample of its own.
                if stack.value == 0 {
                    current.push((0, usize::MAX));
                    continue;
                }
                let id = stack.frames.as_ptr() as usize;
                let sample = match previous.get(n) {
                    Some(&(p, i)) if p == id && i != usize::MAX => i,
                    _ => {
                        key.clear();
                        // FlameStack is root first; pprof's location_id is leaf first.
                        for &f in stack.frames.iter().rev() {
                            let known = tables[table].1[f as usize];
                            let function = if known != 0 {
                                known
                            } else {
                                let id = b.function(&view.frames[f as usize].name);
                                tables[table].1[f as usize] = id;
                                id
                            };
                            key.push(function);
                        }
                        b.sample(&key, types)
                    }
                };
                current.push((id, sample));
                // One stack twice in a view (two sites whose frames have the same names) is one
                // sample: their values add up, so the view's total is kept.
                let v = &mut b.values[sample * types + t];
                *v = v.saturating_add(stack.value);
            }
            std::mem::swap(&mut previous, &mut current);
        }
        b
    }

    /// The index of the sample of these location ids, a new one (all its values 0) if there is none.
    fn sample(&mut self, key: &[u64], types: usize) -> usize {
        let (i, new) = self.samples.find_or_add(key);
        if new {
            self.values.resize(self.values.len() + types, 0);
        }
        i
    }

    fn string(&mut self, s: &'a str) -> u64 {
        if let Some(&i) = self.string_index.get(s) {
            return i;
        }
        let i = self.strings.len() as u64;
        self.strings.push(s);
        self.string_index.insert(s, i);
        i
    }

    /// The id of the function (and location) named `name`.
    fn function(&mut self, name: &'a str) -> u64 {
        if let Some(&id) = self.function_index.get(name) {
            return id;
        }
        let name_index = self.string(name);
        self.functions.push(name_index);
        let id = self.functions.len() as u64;
        self.function_index.insert(name, id);
        id
    }

    fn write(self) -> Vec<u8> {
        let types = self.sample_types.len();

        // About what the samples take (a byte or two per location id, a few per value): the buffer
        // then grows once or twice rather than copying itself twenty times.
        let mut w =
            Writer::with_capacity(self.samples.ids.len() * 2 + self.values.len() * 4 + 4096);
        // Profile.sample_type = 1: ValueType { type = 1, unit = 2 }.
        for &(ty, unit) in &self.sample_types {
            w.message(1, |m| {
                m.uint(1, ty);
                m.uint(2, unit);
            });
        }
        // Profile.sample = 2: Sample { location_id = 1, value = 2 }, both packed.
        for i in 0..self.samples.len() {
            let locations = self.samples.get(i);
            let values = &self.values[i * types..(i + 1) * types];
            w.message(2, |m| {
                m.packed(1, locations.iter().copied());
                m.packed(2, values.iter().map(|&v| int64(v)));
            });
        }
        // Profile.location = 4: Location { id = 1, line = 4: Line { function_id = 1 } }, and
        // Profile.function = 5: Function { id = 1, name = 2, system_name = 3 }. A Java method's name is
        // both the name shown and the name in the binary.
        for id in 1..=self.functions.len() as u64 {
            w.message(4, |m| {
                m.uint(1, id);
                m.message(4, |line| line.uint(1, id));
            });
        }
        for (i, &name) in self.functions.iter().enumerate() {
            w.message(5, |m| {
                m.uint(1, i as u64 + 1);
                m.uint(2, name);
                m.uint(3, name);
            });
        }
        // Profile.string_table = 6.
        for s in &self.strings {
            w.bytes(6, s.as_bytes());
        }
        if let Some(&(ty, unit)) = self.sample_types.first() {
            // Profile.period_type = 11 and period = 12: every event is counted, one in one.
            w.message(11, |m| {
                m.uint(1, ty);
                m.uint(2, unit);
            });
            w.uint(12, 1);
            // Profile.default_sample_type = 14: the first view, as the flame graph page opens on it.
            w.uint(14, ty);
        }
        w.into_bytes()
    }
}

/// The samples' location ids, each distinct sequence once, numbered as first added: kept end to end in
/// one vector and found through their hash, rather than a map of a vector per sample (an allocation
/// and a free per sample, which was most of the encoding's time).
#[derive(Default)]
struct Samples {
    ids: Vec<u64>,
    /// Where each sample's ids start in `ids`; the last entry is the end.
    starts: Vec<usize>,
    /// The first sample of each hash; `next` chains the others of the same hash.
    by_hash: Map<u64, usize>,
    next: Vec<usize>,
}

impl Samples {
    fn len(&self) -> usize {
        self.starts.len().saturating_sub(1)
    }

    fn get(&self, i: usize) -> &[u64] {
        &self.ids[self.starts[i]..self.starts[i + 1]]
    }

    /// The sample of `key`, and whether it is new.
    fn find_or_add(&mut self, key: &[u64]) -> (usize, bool) {
        let mut h = WordHash::default();
        for &k in key {
            h.mix(k);
        }
        h.mix(key.len() as u64);
        let hash = h.finish();
        let mut at = self.by_hash.get(&hash).copied();
        while let Some(i) = at {
            if self.get(i) == key {
                return (i, false);
            }
            at = Some(self.next[i]).filter(|&n| n != usize::MAX);
        }
        if self.starts.is_empty() {
            self.starts.push(0);
        }
        let i = self.len();
        self.ids.extend_from_slice(key);
        self.starts.push(self.ids.len());
        // The new sample heads its hash's chain; the one it displaces comes next.
        let previous = self.by_hash.insert(hash, i).unwrap_or(usize::MAX);
        self.next.push(previous);
        (i, true)
    }
}

/// The tables' hash maps. Their keys are the profile's own frame names and stacks, not an adversary's,
/// so the flooding resistance of the standard SipHash, paid at every lookup of millions of frames, buys
/// nothing here: a multiply-and-rotate hash of 8 bytes a step does instead.
type Map<K, V> = HashMap<K, V, BuildHasherDefault<WordHash>>;

#[derive(Default)]
struct WordHash(u64);

impl WordHash {
    fn mix(&mut self, word: u64) {
        // An odd constant (2^64 / the golden ratio) spreads each word over the high bits.
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

impl Hasher for WordHash {
    fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for w in &mut words {
            self.mix(u64::from_le_bytes(w.try_into().expect("8 bytes")));
        }
        let rest = words.remainder();
        if !rest.is_empty() {
            let mut w = [0; 8];
            w[..rest.len()].copy_from_slice(rest);
            self.mix(u64::from_le_bytes(w));
        }
    }

    fn write_u64(&mut self, v: u64) {
        self.mix(v);
    }

    fn write_usize(&mut self, v: usize) {
        self.mix(v as u64);
    }

    fn finish(&self) -> u64 {
        // The multiplication leaves the low bits, which pick the bucket, the weakest: fold the high
        // ones down.
        self.0 ^ (self.0 >> 32)
    }
}

/// pprof's values are `int64`: a count beyond it (never seen: 2^63 nanoseconds are 292 years) is kept
/// at the largest.
fn int64(v: u64) -> u64 {
    v.min(i64::MAX as u64)
}
