//! Method and allocation-site ids: small integers baked into the injected code, and the map back to
//! names that reports need.
//!
//! An id is assigned the first time its method (or site) is seen and is looked up, not reassigned, when
//! the same class is rewritten again (a retransform, or `rewrite-class` run twice in one process), so the
//! same class always gets the same bytes. The order of first sight decides the numbers; `rewrite-class`
//! visits inputs in sorted order, so its ids are reproducible run to run.

use std::collections::HashMap;
use std::sync::Mutex;

/// A method that has an id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MethodInfo {
    pub id: u32,
    /// Internal name, for example `java/lang/String`.
    pub class: String,
    pub name: String,
    pub descriptor: String,
}

/// An array-allocation site.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SiteInfo {
    pub id: u32,
    /// Id of the method that contains the site.
    pub method: u32,
    /// Offset of the allocating instruction in the original method.
    pub pc: u32,
    /// Source line, when the class has a LineNumberTable.
    pub line: Option<u16>,
    /// Descriptor of the allocated array type, for example `[I` or `[[Ljava/lang/String;`.
    pub array_type: String,
}

#[derive(Default)]
struct Tables {
    method_ids: HashMap<(String, String, String), u32>,
    methods: Vec<MethodInfo>,
    site_ids: HashMap<(u32, u32), u32>,
    sites: Vec<SiteInfo>,
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
        let key = (text(class), text(name), text(descriptor));
        let mut t = self.lock();
        if let Some(&id) = t.method_ids.get(&key) {
            return id;
        }
        let id = FIRST_ID + t.methods.len() as u32;
        t.methods.push(MethodInfo {
            id,
            class: key.0.clone(),
            name: key.1.clone(),
            descriptor: key.2.clone(),
        });
        t.method_ids.insert(key, id);
        id
    }

    /// The id of the array site at `pc` of method `method`; `describe` supplies the line and array type
    /// the first time the site is seen.
    pub fn site_id(
        &self,
        method: u32,
        pc: u32,
        describe: impl FnOnce() -> (Option<u16>, String),
    ) -> u32 {
        let mut t = self.lock();
        if let Some(&id) = t.site_ids.get(&(method, pc)) {
            return id;
        }
        let id = FIRST_ID + t.sites.len() as u32;
        let (line, array_type) = describe();
        t.sites.push(SiteInfo {
            id,
            method,
            pc,
            line,
            array_type,
        });
        t.site_ids.insert((method, pc), id);
        id
    }

    /// Every method with an id, in id order.
    pub fn methods(&self) -> Vec<MethodInfo> {
        self.lock().methods.clone()
    }

    /// Every array site, in id order.
    pub fn sites(&self) -> Vec<SiteInfo> {
        self.lock().sites.clone()
    }

    pub fn method(&self, id: u32) -> Option<MethodInfo> {
        let t = self.lock();
        t.methods.get(id.checked_sub(FIRST_ID)? as usize).cloned()
    }

    pub fn site(&self, id: u32) -> Option<SiteInfo> {
        let t = self.lock();
        t.sites.get(id.checked_sub(FIRST_ID)? as usize).cloned()
    }

    /// The map as tab-separated text: `method<TAB>id<TAB>class<TAB>name<TAB>descriptor` and
    /// `site<TAB>id<TAB>method id<TAB>pc<TAB>line<TAB>array type` lines (line `-` when unknown).
    pub fn to_tsv(&self) -> String {
        use std::fmt::Write;
        let t = self.lock();
        let mut s = String::new();
        for m in &t.methods {
            let _ = writeln!(
                s,
                "method\t{}\t{}\t{}\t{}",
                m.id, m.class, m.name, m.descriptor
            );
        }
        for site in &t.sites {
            let line = site.line.map_or("-".to_string(), |l| l.to_string());
            let _ = writeln!(
                s,
                "site\t{}\t{}\t{}\t{}\t{}",
                site.id, site.method, site.pc, line, site.array_type
            );
        }
        s
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
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
        let s = r.site_id(a, 7, || (Some(3), "[I".into()));
        assert_eq!(r.site_id(a, 7, || unreachable!()), s);
        assert_eq!(r.site(s).unwrap().line, Some(3));
        assert_eq!(r.method(2).unwrap().name, "g");
        assert!(r.method(0).is_none());
    }
}
