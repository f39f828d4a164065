//! ClassFileLoadHook: runs the rewriter on every class the rules select, with the probes that are on
//! (switches.rs). A class nothing selects is returned untouched, without a copy (on a retransform that
//! is the class's original bytes: how a probe switched off leaves the code); a class that cannot be
//! rewritten loads unchanged and is reported once; no panic reaches the VM.

use std::sync::atomic::Ordering;

use crate::jni::Jni;
use crate::state::{agent, lock, Agent};
use crate::switches::Switched;
use instr_rewriter::classfile::ClassFile;
use instr_rewriter::probes::exclusions::class_never_instrumented;
use instr_rewriter::probes::{Flavour, Instrumenter, Selection};
use instr_rewriter::{rewrite, Options};

/// ClassFileLoadHook: the rewritten class, or None to load it as it is.
pub fn class_file_load_hook(jni: Option<Jni>, name: &[u8], bytes: &[u8]) -> Option<Vec<u8>> {
    let a = agent()?;
    // The lambda factory keeps its patch whether or not a probe is on (lambda_classes.rs).
    let patched = crate::lambda_classes::patch(name, bytes);
    let Some(selection) = crate::switches::selection(&a.rules) else {
        return patched;
    };
    if !wanted(&selection, name) {
        return patched;
    }
    let rewritten = match &patched {
        Some(p) => instrument(a, &selection, name, p).or(patched),
        None => instrument(a, &selection, name, bytes),
    };
    // Before any method of the class can run, every thread's call row must hold the ids it was given.
    if let (Some(jni), Some(_)) = (jni, &rewritten) {
        crate::calls::cover_method_ids(a, jni);
    }
    rewritten
}

/// The check made before touching the bytes: most classes of a selective rules file stop here.
pub fn wanted(selection: &Switched, name: &[u8]) -> bool {
    if name.is_empty() {
        return true; // unnamed: let the rewriter read the name from the class itself
    }
    !class_never_instrumented(name)
        && ((selection.objects() && name == b"java/lang/Object") || selection.class_wanted(name))
}

fn instrument(a: &Agent, selection: &Switched, name: &[u8], bytes: &[u8]) -> Option<Vec<u8>> {
    let flavour = if a.engaged.load(Ordering::Acquire) {
        Flavour::Native
    } else {
        Flavour::Early
    };
    let edit = Instrumenter {
        selection,
        ids: &a.ids,
        flavour,
        calls: a.call_probes,
    };
    match rewrite(bytes, &edit, Options::default()) {
        Ok(r) => {
            for w in &r.warnings {
                report_once(a, name, bytes, w);
            }
            if r.bytes.is_some() {
                crate::switches::changed(name);
            }
            r.bytes
        }
        Err(e) => {
            report_once(a, name, bytes, &format!("{e}; loaded unchanged"));
            None
        }
    }
}

/// One line per class and problem. A class defined without a name (`defineClass(null, ...)`) is named
/// from its own bytes where they can be read, so that each such class gets its own line.
fn report_once(a: &Agent, name: &[u8], bytes: &[u8], message: &str) {
    let class = if name.is_empty() {
        match ClassFile::read(bytes) {
            Ok(c) => String::from_utf8_lossy(c.name()).into_owned(),
            Err(_) => format!("a class defined without a name ({} bytes)", bytes.len()),
        }
    } else {
        String::from_utf8_lossy(name).into_owned()
    };
    if lock(&a.failed).insert(format!("{class}\n{message}")) {
        eprintln!("instr: {class}: {message}");
    }
}
