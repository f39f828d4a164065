//! What is never instrumented, whatever the rules say: the places where a probe would call itself, or
//! where the JVM depends on the exact code.

/// Classes left untouched: the proxy itself (a probe in it would recurse), its nested classes and its
/// companions in `java.lang` whose names start with `HeapProxy` (`HeapProxyCalls`, the method-call half).
pub fn class_never_instrumented(class: &[u8]) -> bool {
    class.starts_with(super::heap_proxy::PROXY_CLASS.as_bytes())
}

/// Why a method never gets entry/exit probes, or `None` when it may.
pub fn method_probes_forbidden(class: &[u8], method: &[u8]) -> Option<&'static str> {
    if class == b"java/lang/Object" && method == b"<init>" {
        // It runs for every object and already carries the allocation probe; entry/exit calls there
        // would triple the cost of every allocation in the VM and tell nothing the subclass
        // constructors' own probes do not.
        return Some("java.lang.Object.<init> carries the allocation probe");
    }
    if class == b"jdk/internal/misc/Unsafe" {
        // HeapProxy counts with Unsafe's atomics; a probe in them would call HeapProxy again.
        return Some("HeapProxy's own atomics (jdk.internal.misc.Unsafe)");
    }
    None
}
