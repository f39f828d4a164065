//! Dense class indexes for the allocation counters, one per class *name*. HeapProxyAllocs asks for one the
//! first time it sees a class (`HeapProxy.classIndex`); the name and instance size are recorded here, in
//! the agent, so that the reports never need the `Class` object: a class that has unloaded is still reported
//! under its name, and the Java side is free to hold classes weakly. A name defined again by another loader
//! (an application server's redeploy, a test's throw-away loader) gets the index it had, so the indexes are
//! bounded by the number of distinct names, not of class loads.

use std::collections::HashMap;

pub struct ClassIndex {
    by_name: HashMap<String, i32>,
    /// By index: the JVM signature (`Ljava/lang/String;`, `[I`) and the instance size in bytes.
    entries: Vec<(String, u64)>,
    limit: usize,
}

impl ClassIndex {
    /// Indexes from 1 (HeapProxyAllocs uses row columns 0 and 1 for its salt) to `limit` - 1.
    pub fn new(limit: usize) -> ClassIndex {
        ClassIndex {
            by_name: HashMap::new(),
            entries: vec![(String::new(), 0)],
            limit,
        }
    }

    /// The index of `signature`, given now if it has none; None when every index is taken.
    pub fn index(&mut self, signature: &str, size: u64) -> Option<i32> {
        if let Some(&i) = self.by_name.get(signature) {
            return Some(i);
        }
        if self.entries.len() >= self.limit {
            return None;
        }
        let i = self.entries.len() as i32;
        self.entries.push((signature.to_string(), size));
        self.by_name.insert(signature.to_string(), i);
        Some(i)
    }

    /// (index, signature, instance size) of every class given an index.
    pub fn entries(&self) -> impl Iterator<Item = (usize, &str, u64)> {
        self.entries
            .iter()
            .enumerate()
            .skip(1)
            .map(|(i, (name, size))| (i, name.as_str(), *size))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_keeps_its_index_and_the_table_refuses_past_its_limit() {
        let mut t = ClassIndex::new(3);
        assert_eq!(t.index("LA;", 16), Some(1));
        assert_eq!(t.index("LB;", 24), Some(2));
        assert_eq!(
            t.index("LA;", 99),
            Some(1),
            "a second class named A shares A's index"
        );
        assert_eq!(
            t.index("LC;", 8),
            None,
            "indexes 1 and 2 are the only ones under a limit of 3"
        );
        let all: Vec<_> = t.entries().collect();
        assert_eq!(all, vec![(1, "LA;", 16), (2, "LB;", 24)]);
    }
}
