//! Collapsed stacks (`frame;frame;leaf value`, one line per stack), the input of flamegraph.pl,
//! speedscope and most flame-graph tools.

use std::fmt::Write as _;

use crate::flame::FlameView;

pub fn render(view: &FlameView) -> String {
    let mut s = String::new();
    for stack in &view.stacks {
        let names: Vec<&str> = stack.frames.iter().map(|f| &*f.name).collect();
        let _ = writeln!(s, "{} {}", names.join(";"), stack.value);
    }
    s
}
