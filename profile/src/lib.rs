//! `instr-profile`: the plain-data [`Profile`] the agent writes as `PREFIX.json` (schema
//! `instr-profile/2`, docs/REPORTS.md), read back by the `instr` command-line tool, and the renderers,
//! pure functions of a profile that the agent and the tool share. Nothing here knows of JNI, JVMTI or the
//! agent: every renderer can be tested on a profile made in the test.
//!
//! - [`model`]: the profile, serialised as the JSON report.
//! - [`flame`]: a profile's weighted stacks, one [`flame::FlameView`] per thing measured (objects and
//!   bytes allocated, live objects, calls, CPU and wall time); what the flame graphs, pprof and the
//!   collapsed files are drawn from.
//! - [`fast_hash`]: the hasher of the maps keyed by measured data.
//! - [`filter`]: a profile narrowed to packages, threads or its largest rows, before rendering.
//! - [`samples`]: the sampler's section, merged into the method rows, its views and text section;
//!   [`sample_log`]: the binary log the agent appends samples to as the program runs.
//! - [`render`]: the hprof-style text report, collapsed stacks, the HTML flame graph, SVG, pprof, the
//!   diff of two profiles, and every file the agent writes for a profile at once (`render::files`).

pub mod fast_hash;
pub mod filter;
pub mod flame;
pub mod model;
pub mod render;
pub mod sample_log;
pub mod samples;

pub use model::{Profile, ProfileError};
