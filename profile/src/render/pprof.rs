//! pprof: a gzipped `profile.proto`, one sample type per view. (Placeholder.)

use crate::flame::FlameView;

pub fn render(views: &[FlameView]) -> Vec<u8> {
    let _ = views;
    Vec::new()
}
