//! A view's stacks merged into one call tree, built once in Rust: the page embeds this tree (a few
//! numbers per distinct frame path) rather than every stack, so a profile of 100,000 stacks loads and
//! draws without the browser merging them, and the SVG is drawn from the same tree.

use std::collections::HashMap;
use std::sync::Arc;

use crate::fast_hash::Fx;
use crate::flame::{FlameFrame, FlameView, FrameKind};

/// Frame names shared by every view of a page: each distinct (name, kind) once.
#[derive(Default)]
pub(crate) struct Names {
    pub names: Vec<String>,
    pub kinds: Vec<FrameKind>,
    /// Looked up by `&str`, so that the millions of frames that repeat a name allocate nothing.
    index: HashMap<String, [u32; 3], Fx>,
}

impl Names {
    pub fn intern(&mut self, name: &str, kind: FrameKind) -> u32 {
        let k = kind_rank(kind) as usize;
        if let Some(slots) = self.index.get_mut(name) {
            if slots[k] != u32::MAX {
                return slots[k];
            }
            slots[k] = self.names.len() as u32;
        } else {
            let mut slots = [u32::MAX; 3];
            slots[k] = self.names.len() as u32;
            self.index.insert(name.to_string(), slots);
        }
        self.names.push(name.to_string());
        self.kinds.push(kind);
        (self.names.len() - 1) as u32
    }
}

/// The merged tree in preorder, children sorted by name (as flamegraph.pl does, so that a page, its
/// SVG and the golden files do not depend on the order of the stacks). Node 0 is the root, `all`.
pub(crate) struct Tree {
    /// Index into [`Names`]; `ROOT_NAME` for the root, `MERGED_NAME` for siblings merged into one.
    pub name: Vec<u32>,
    pub depth: Vec<u32>,
    /// The value of the stacks ending at this node (a merged node's: all of the merged frames').
    pub self_value: Vec<u64>,
    /// The value of every stack through this node (its own and its descendants').
    pub total: Vec<u64>,
}

pub(crate) const ROOT_NAME: u32 = u32::MAX;
/// A run of sibling frames each below the view's merge threshold, with everything under them: one node
/// whose value is their sum, so every total above it stays exact.
pub(crate) const MERGED_NAME: u32 = u32::MAX - 1;
/// Trees of more nodes than this (all views of the page together) have their smallest frames merged.
pub(crate) const MERGE_FROM_NODES: usize = 20_000;

/// The stacks of several views merged into one tree of every path any of them has, built once: views of
/// the same stacks (the objects and bytes of the allocation sites, the calls, CPU and wall time of the
/// call paths) share their stacks by pointer, so each distinct stack is read, ranked and sorted once.
struct Union {
    /// Per node, in preorder: its name (page name index) and depth.
    name: Vec<u32>,
    depth: Vec<u32>,
    /// The index after the node's subtree.
    end: Vec<u32>,
    /// The leaf node of each view's each stack.
    leaf: Vec<Vec<u32>>,
}

impl Union {
    fn build(views: &[&FlameView], names: &mut Names) -> Union {
        // Page names for each view's frame table (the views of one profile share theirs).
        let mut tables: Vec<(*const FlameFrame, Vec<u32>)> = Vec::new();
        let mut table_of = Vec::with_capacity(views.len());
        for v in views {
            let ptr = v.frames.as_ptr();
            let t = match tables.iter().position(|(p, _)| *p == ptr) {
                Some(t) => t,
                None => {
                    let map = v
                        .frames
                        .iter()
                        .map(|f| names.intern(&f.name, f.kind))
                        .collect();
                    tables.push((ptr, map));
                    tables.len() - 1
                }
            };
            table_of.push(t);
        }
        let rank = names.ranks();
        // Each distinct stack once (by pointer and table), as the ranks of its frames' names.
        let mut distinct: HashMap<(usize, usize, usize), u32, Fx> = HashMap::default();
        let mut ranks: Vec<u32> = Vec::new();
        let mut spans: Vec<(usize, usize)> = Vec::new();
        let mut stack_of: Vec<Vec<u32>> = Vec::with_capacity(views.len());
        for (k, (v, &t)) in views.iter().zip(&table_of).enumerate() {
            let map = &tables[t].1;
            let mut ids = Vec::with_capacity(v.stacks.len());
            // Views drawn from the same rows list the same stacks in the same order: a stack at the
            // place it had in the view before is known without a lookup in the map, a cache miss each.
            let before = k
                .checked_sub(1)
                .filter(|&p| table_of[p] == t)
                .map(|p| (&views[p].stacks, &stack_of[p]));
            for (n, s) in v.stacks.iter().enumerate() {
                if let Some((stacks, known)) = before {
                    if stacks
                        .get(n)
                        .is_some_and(|b| Arc::ptr_eq(&b.frames, &s.frames))
                    {
                        ids.push(known[n]);
                        continue;
                    }
                }
                let key = (s.frames.as_ptr() as usize, s.frames.len(), t);
                let id = *distinct.entry(key).or_insert_with(|| {
                    let start = ranks.len();
                    ranks.extend(s.frames.iter().map(|&f| rank[map[f as usize] as usize]));
                    spans.push((start, ranks.len()));
                    (spans.len() - 1) as u32
                });
                ids.push(id);
            }
            stack_of.push(ids);
        }
        drop(distinct);
        // Sorted by their names, the stacks list the tree's paths in preorder, a path right after its
        // prefixes: each stack adds the nodes past what it shares with the one before.
        let key = |i: u32| {
            let (a, b) = spans[i as usize];
            &ranks[a..b]
        };
        let mut order: Vec<u32> = (0..spans.len() as u32).collect();
        sort_stacks(&mut order, &ranks, &spans, rank.len());
        // The ranks copied in sorted order first: the stacks are read in an order unrelated to where
        // they lie, a cache miss each, and a loop doing nothing but copy overlaps those misses, which
        // the loop below, comparing each stack with the one before, cannot.
        let mut sorted: Vec<u32> = Vec::with_capacity(ranks.len());
        let mut ends: Vec<usize> = Vec::with_capacity(order.len());
        for &i in &order {
            sorted.extend_from_slice(key(i));
            ends.push(sorted.len());
        }
        drop(ranks);
        let by_rank = names.by_rank();
        let mut name = vec![ROOT_NAME];
        let mut depth = vec![0u32];
        let mut leaf_of = vec![0u32; spans.len()];
        // The nodes of the previous stack's path, root excluded.
        let mut path: Vec<u32> = Vec::new();
        let mut previous: &[u32] = &[];
        let mut start = 0;
        for (&i, &end) in order.iter().zip(&ends) {
            let frames = &sorted[start..end];
            start = end;
            let shared = frames
                .iter()
                .zip(previous)
                .take_while(|(a, b)| a == b)
                .count();
            path.truncate(shared);
            for (d, &r) in frames.iter().enumerate().skip(shared) {
                path.push(name.len() as u32);
                name.push(by_rank[r as usize]);
                depth.push(d as u32 + 1);
            }
            leaf_of[i as usize] = path.last().copied().unwrap_or(0);
            previous = frames;
        }
        let mut end = vec![name.len() as u32; name.len()];
        let mut open: Vec<u32> = Vec::new();
        for (i, &d) in depth.iter().enumerate() {
            while let Some(&o) = open.last() {
                if depth[o as usize] >= d {
                    end[o as usize] = i as u32;
                    open.pop();
                } else {
                    break;
                }
            }
            open.push(i as u32);
        }
        let leaf = stack_of
            .into_iter()
            .map(|ids| ids.into_iter().map(|i| leaf_of[i as usize]).collect())
            .collect();
        Union {
            name,
            depth,
            end,
            leaf,
        }
    }

    /// View `k`'s tree: the nodes its stacks reach, and with `merge_below` (a fraction of the view's
    /// total, as 1/N) each run of sibling frames below that merged into one node.
    fn tree(&self, k: usize, view: &FlameView, merge_below: Option<u64>) -> Tree {
        let n = self.name.len();
        // Prefix sums of the self values in preorder: a node's total is the sum over its subtree,
        // which is the contiguous range up to `end`, so it is one subtraction, and a subtree left out
        // is never visited.
        let mut prefix = vec![0u64; n + 1];
        for (s, &leaf) in view.stacks.iter().zip(&self.leaf[k]) {
            let v = &mut prefix[leaf as usize + 1];
            *v = v.wrapping_add(s.value);
        }
        for i in 0..n {
            prefix[i + 1] = prefix[i + 1].wrapping_add(prefix[i]);
        }
        let total = |i: usize| prefix[self.end[i] as usize].wrapping_sub(prefix[i]);
        let self_of = |i: usize| prefix[i + 1].wrapping_sub(prefix[i]);
        // A small tree is sent whole: merging only pays where the page would be slow.
        let threshold = match merge_below {
            Some(m) if n > MERGE_FROM_NODES => total(0) / m.max(1),
            _ => 0,
        };
        let mut t = Tree {
            name: Vec::new(),
            depth: Vec::new(),
            self_value: Vec::new(),
            total: Vec::new(),
        };
        let mut i = 0;
        while i < n {
            if i != 0 && total(i) == 0 {
                i = self.end[i] as usize;
                continue;
            }
            if i != 0 && total(i) < threshold {
                let d = self.depth[i];
                let mut sum = 0u64;
                while i < n && self.depth[i] == d && total(i) < threshold {
                    sum += total(i);
                    i = self.end[i] as usize;
                }
                t.name.push(MERGED_NAME);
                t.depth.push(d);
                t.self_value.push(sum);
                t.total.push(sum);
                continue;
            }
            t.name.push(self.name[i]);
            t.depth.push(self.depth[i]);
            t.self_value.push(self_of(i));
            t.total.push(total(i));
            i += 1;
        }
        t
    }
}

/// Sorts stacks (`order`, indexes into `spans`, each a range of `ranks`) by their ranks, a stack before
/// the longer ones it is a prefix of. Keys of several ranks packed in a u64 (each rank + 1, 0 past the
/// end) are sorted as integers, and only runs of equal keys that go on are sorted again by the next
/// ranks: far fewer steps than comparing rank slices, and no recursion however deep the stacks.
fn sort_stacks(order: &mut [u32], ranks: &[u32], spans: &[(usize, usize)], names: usize) {
    let bits: u32 = if names < (1 << 16) - 1 { 16 } else { 32 };
    let per = (64 / bits) as usize;
    let chunk = |i: u32, off: usize| -> u64 {
        let (a, b) = spans[i as usize];
        let mut k = 0u64;
        for j in 0..per {
            let at = a + off + j;
            let r = if at < b { u64::from(ranks[at]) + 1 } else { 0 };
            k = k << bits | r;
        }
        k
    };
    let last_mask = (1u64 << bits) - 1;
    let mut keyed: Vec<(u64, u32)> = Vec::new();
    let mut todo: Vec<(usize, usize, usize)> = vec![(0, order.len(), 0)];
    while let Some((start, end, off)) = todo.pop() {
        keyed.clear();
        keyed.extend(order[start..end].iter().map(|&i| (chunk(i, off), i)));
        keyed.sort_unstable();
        let mut run = 0;
        while run < keyed.len() {
            let k = keyed[run].0;
            let mut next = run + 1;
            while next < keyed.len() && keyed[next].0 == k {
                next += 1;
            }
            // Equal keys whose last rank is not past the end may differ further on.
            if next - run > 1 && k & last_mask != 0 {
                todo.push((start + run, start + next, off + per));
            }
            run = next;
        }
        for (o, &(_, i)) in order[start..end].iter_mut().zip(&keyed) {
            *o = i;
        }
    }
}

impl Tree {
    /// One view's tree, nothing merged (the SVG merges what is narrower than a pixel as it draws).
    pub fn build(view: &FlameView, names: &mut Names) -> Tree {
        Union::build(&[view], names).tree(0, view, None)
    }

    /// The trees of several views, built together (see [`Union`]); each run of sibling frames below
    /// `1 / merge_below` of its view's total is merged into one node.
    pub fn build_all(
        views: &[FlameView],
        names: &mut Names,
        merge_below: Option<u64>,
    ) -> Vec<Tree> {
        let refs: Vec<&FlameView> = views.iter().collect();
        let union = Union::build(&refs, names);
        views
            .iter()
            .enumerate()
            .map(|(k, v)| union.tree(k, v, merge_below))
            .collect()
    }

    pub fn len(&self) -> usize {
        self.name.len()
    }
}

impl Names {
    /// Each name's place in the order of (name, kind).
    fn ranks(&self) -> Vec<u32> {
        let mut rank = vec![0u32; self.names.len()];
        for (r, &n) in self.by_rank().iter().enumerate() {
            rank[n as usize] = r as u32;
        }
        rank
    }

    /// The names' indexes in the order of (name, kind).
    fn by_rank(&self) -> Vec<u32> {
        let mut order: Vec<u32> = (0..self.names.len() as u32).collect();
        order.sort_by(|&a, &b| {
            let (a, b) = (a as usize, b as usize);
            (&self.names[a], kind_rank(self.kinds[a]))
                .cmp(&(&self.names[b], kind_rank(self.kinds[b])))
        });
        order
    }
}

fn kind_rank(k: FrameKind) -> u8 {
    match k {
        FrameKind::Jdk => 0,
        FrameKind::App => 1,
        FrameKind::Allocated => 2,
    }
}

/// The letter the page's data gives a frame kind.
pub(crate) fn kind_letter(k: FrameKind) -> char {
    match k {
        FrameKind::Jdk => 'j',
        FrameKind::App => 'a',
        FrameKind::Allocated => 'c',
    }
}
