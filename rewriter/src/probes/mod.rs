//! The probes: edits that insert calls to `HeapProxy`. Each probe is its own module with a `plan`
//! function; [`Instrumenter`] runs the ones a [`Selection`] asks for.

pub mod allocation_sites;
pub mod constructed_objects;
pub mod exclusions;
pub mod heap_proxy;
pub mod ids;
pub mod initialized_code;
pub mod instrument;
pub mod lambda_classes;
pub mod method_calls;
pub mod nop;
pub mod object_alloc;
pub mod selection;
pub mod vm_made;

pub use heap_proxy::{Flavour, Probe, PROXY_CLASS};
pub use ids::{IdRegistry, MethodInfo, SiteInfo};
pub use instrument::Instrumenter;
pub use method_calls::CallProbes;
pub use selection::Selection;
