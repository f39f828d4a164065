//! Collapsed stacks (`frame;frame;leaf value`, one line per stack), the input of flamegraph.pl,
//! speedscope and most flame-graph tools.

use crate::flame::FlameView;

pub fn render(view: &FlameView) -> String {
    // A line is some 40 bytes a frame: sized once rather than grown through a hundred copies.
    let frames: usize = view.stacks.iter().map(|s| s.frames.len()).sum();
    let mut s = String::with_capacity(frames * 40 + view.stacks.len() * 12);
    let mut digits = itoa_buffer();
    for stack in &view.stacks {
        for (i, f) in view.frames_of(stack).enumerate() {
            if i > 0 {
                s.push(';');
            }
            s.push_str(&f.name);
        }
        s.push(' ');
        s.push_str(digits.format(stack.value));
        s.push('\n');
    }
    s
}

/// Decimal digits of a u64 without `fmt`'s machinery, which is most of the time of a million numbers.
pub(crate) struct Digits([u8; 20]);

pub(crate) fn itoa_buffer() -> Digits {
    Digits([0; 20])
}

impl Digits {
    pub fn format(&mut self, mut v: u64) -> &str {
        let mut i = self.0.len();
        loop {
            i -= 1;
            self.0[i] = b'0' + (v % 10) as u8;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        std::str::from_utf8(&self.0[i..]).expect("ASCII digits")
    }
}
