//! Renderers: each is a pure function of a [`crate::Profile`] or of its [`crate::flame::FlameView`]s.

pub mod collapsed;
pub mod diff;
pub mod files;
pub mod html;
pub mod pprof;
mod protobuf;
pub mod svg;
pub mod text;
pub mod threads_text;
