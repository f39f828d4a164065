//! One view as a static SVG flame graph, for embedding. (Placeholder.)

use crate::flame::FlameView;

pub fn render(view: &FlameView, width: u32) -> String {
    let _ = view;
    format!("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"16\"></svg>\n")
}
