//! A view's stacks merged into one call tree, built once in Rust: the page embeds this tree (a few
//! numbers per distinct frame path) rather than every stack, so a profile of 100,000 stacks loads and
//! draws without the browser merging them, and the SVG is drawn from the same tree.

use std::collections::HashMap;

use crate::flame::{FlameView, FrameKind};

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

/// A multiplicative hasher (the Fx hash's idea, written here): the tree's map is keyed by pairs of
/// small integers, millions of lookups, and SipHash's resistance to chosen keys buys nothing on data
/// the agent measured.
#[derive(Default, Clone, Copy)]
pub(crate) struct Fx;

pub(crate) struct FxHasher(u64);

impl std::hash::BuildHasher for Fx {
    type Hasher = FxHasher;
    fn build_hasher(&self) -> FxHasher {
        FxHasher(0)
    }
}

impl std::hash::Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut b = [0u8; 8];
            b[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(b));
        }
    }
    fn write_u32(&mut self, v: u32) {
        self.write_u64(u64::from(v));
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

/// The merged tree in preorder, children sorted by name (as flamegraph.pl does, so that a page, its
/// SVG and the golden files do not depend on the order of the stacks). Node 0 is the root, `all`.
pub(crate) struct Tree {
    /// Index into [`Names`]; `u32::MAX` for the root.
    pub name: Vec<u32>,
    pub depth: Vec<u32>,
    /// The value of the stacks ending at this node.
    pub self_value: Vec<u64>,
    /// The value of every stack through this node (its own and its descendants').
    pub total: Vec<u64>,
}

pub(crate) const ROOT_NAME: u32 = u32::MAX;

impl Tree {
    pub fn build(view: &FlameView, names: &mut Names) -> Tree {
        // Merge: one node per distinct (parent, frame), found through one map rather than a map per
        // node (a million small maps cost more than the tree).
        let mut parent: Vec<u32> = vec![u32::MAX];
        let mut name: Vec<u32> = vec![ROOT_NAME];
        let mut self_value: Vec<u64> = vec![0];
        let mut child: HashMap<(u32, u32), u32, Fx> = HashMap::default();
        for stack in &view.stacks {
            let mut node = 0u32;
            for f in &stack.frames {
                let n = names.intern(&f.name, f.kind);
                node = *child.entry((node, n)).or_insert_with(|| {
                    parent.push(node);
                    name.push(n);
                    self_value.push(0);
                    (name.len() - 1) as u32
                });
            }
            self_value[node as usize] += stack.value;
        }
        drop(child);

        // Children lists sorted by (name, kind): rank the names once, then sort the nodes.
        let mut order: Vec<u32> = (0..names.names.len() as u32).collect();
        order.sort_by(|&a, &b| {
            let (a, b) = (a as usize, b as usize);
            (&names.names[a], kind_rank(names.kinds[a]))
                .cmp(&(&names.names[b], kind_rank(names.kinds[b])))
        });
        let mut rank = vec![0u32; order.len()];
        for (r, &n) in order.iter().enumerate() {
            rank[n as usize] = r as u32;
        }
        let mut kids: Vec<u32> = (1..name.len() as u32).collect();
        kids.sort_unstable_by_key(|&k| (parent[k as usize], rank[name[k as usize] as usize]));
        // CSR: the children of node p are kids[start[p]..start[p + 1]].
        let mut start = vec![0usize; name.len() + 1];
        for &k in &kids {
            start[parent[k as usize] as usize + 1] += 1;
        }
        for i in 1..start.len() {
            start[i] += start[i - 1];
        }

        // Preorder, iteratively: stacks can be thousands of frames deep.
        let n = name.len();
        let mut pre: Vec<u32> = Vec::with_capacity(n);
        let mut depth_of: Vec<u32> = Vec::with_capacity(n);
        let mut todo: Vec<(u32, u32)> = vec![(0, 0)];
        while let Some((node, d)) = todo.pop() {
            pre.push(node);
            depth_of.push(d);
            let c = &kids[start[node as usize]..start[node as usize + 1]];
            todo.extend(c.iter().rev().map(|&k| (k, d + 1)));
        }
        let mut tree = Tree {
            name: pre.iter().map(|&i| name[i as usize]).collect(),
            depth: depth_of,
            self_value: pre.iter().map(|&i| self_value[i as usize]).collect(),
            total: Vec::new(),
        };
        tree.total = tree.totals();
        tree
    }

    /// Inclusive values from the preorder alone: a node's parent is the nearest earlier node one level
    /// up, and walking backwards adds every node to its parent after all its descendants were added.
    fn totals(&self) -> Vec<u64> {
        let mut total = self.self_value.clone();
        let mut parent = vec![0usize; total.len()];
        let mut path: Vec<usize> = Vec::new();
        for (i, &d) in self.depth.iter().enumerate() {
            let d = d as usize;
            path.truncate(d);
            if d > 0 {
                parent[i] = path[d - 1];
            }
            path.push(i);
        }
        for i in (1..total.len()).rev() {
            total[parent[i]] += total[i];
        }
        total
    }

    pub fn len(&self) -> usize {
        self.name.len()
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
