//! One view as a static SVG flame graph, for embedding in a page or a document (docs/REPORTS.md): the
//! root at the bottom, a `<rect>` and a `<text>` per frame, each frame's exact value in its `<title>`
//! (the viewer's tooltip). Frames narrower than a pixel cannot be seen; a run of them between wider
//! siblings is drawn as one grey "…" box with their sum, and their descendants are left out, so the
//! file stays small whatever the number of stacks.

use std::fmt::Write as _;

use crate::flame::{FlameView, FrameKind};

use super::html::escape_html;
use super::html::tree::{Names, Tree};

const ROW: f64 = 16.0;
const HEADER: f64 = 28.0;
const MARGIN: f64 = 4.0;
const FONT: f64 = 11.0;
/// An estimate of the average glyph width of an 11px sans-serif font: the SVG has no layout engine at
/// hand to measure text, and a label cut slightly early reads better than one spilling over.
const GLYPH: f64 = FONT * 0.6;
const MIN_W: f64 = 1.0;

struct Box {
    node: usize,
    x: f64,
    w: f64,
    row: usize,
    /// A run of frames each narrower than a pixel: how many, and their sum.
    merged: Option<(usize, u64)>,
}

pub fn render(view: &FlameView, width: u32) -> String {
    let mut names = Names::default();
    let tree = Tree::build(view, &mut names);
    let width_px = f64::from(width.max(100));
    let boxes = layout(&tree, width_px);
    let rows = boxes.iter().map(|b| b.row + 1).max().unwrap_or(1);
    let height = HEADER + rows as f64 * ROW + MARGIN;
    let total = tree.total[0];

    let mut s = String::new();
    let _ = writeln!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" font-family=\"system-ui, sans-serif\" font-size=\"{FONT}\">",
        w = width,
        h = height
    );
    // Titles on the boxes are the tooltips; the labels must not take the pointer from them.
    s.push_str("<style>text{pointer-events:none}</style>\n");
    s.push_str("<rect width=\"100%\" height=\"100%\" fill=\"#fafafa\"/>\n");
    let _ = writeln!(
        s,
        "<text x=\"{}\" y=\"18\" text-anchor=\"middle\" font-size=\"14\">{}: {}</text>",
        fmt(width_px / 2.0),
        escape_html(view.title),
        escape_html(&fmt_value(total, view.unit))
    );
    for b in &boxes {
        let y = HEADER + (rows - 1 - b.row) as f64 * ROW;
        let (label, fill, tip) = match b.merged {
            Some((count, value)) => (
                "…".to_string(),
                "#c8c8c8".to_string(),
                format!(
                    "{} frames narrower than a pixel: {}, {}",
                    fmt_int(count as u64),
                    fmt_value(value, view.unit),
                    pct(value, total)
                ),
            ),
            None => {
                let name = if b.node == 0 {
                    "all"
                } else {
                    names.names[tree.name[b.node] as usize].as_str()
                };
                let fill = if b.node == 0 {
                    "#d8d8d8".to_string()
                } else {
                    colour(name, names.kinds[tree.name[b.node] as usize])
                };
                let v = tree.total[b.node];
                let mut tip = format!("{name}: {}, {}", fmt_value(v, view.unit), pct(v, total));
                if b.node != 0 && tree.self_value[b.node] > 0 {
                    let _ = write!(tip, "; self {}", fmt_int(tree.self_value[b.node]));
                }
                (name.to_string(), fill, tip)
            }
        };
        let _ = write!(
            s,
            "<g><title>{}</title><rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"/>",
            escape_html(&tip),
            fmt(b.x),
            fmt(y),
            fmt((b.w - 0.5).max(0.5)),
            fmt(ROW - 1.0),
            fill
        );
        let text = fit(&label, b.w - 6.0);
        if !text.is_empty() {
            let _ = write!(
                s,
                "<text x=\"{}\" y=\"{}\">{}</text>",
                fmt(b.x + 3.0),
                fmt(y + ROW - 4.5),
                escape_html(&text)
            );
        }
        s.push_str("</g>\n");
    }
    s.push_str("</svg>\n");
    s
}

/// The boxes to draw, from the preorder tree: `open[d]` is the drawn frame open at depth `d` and where
/// its next child starts; a node deeper than the open frames descends from one that was not drawn.
fn layout(tree: &Tree, width: f64) -> Vec<Box> {
    let scale = if tree.total[0] > 0 {
        width / tree.total[0] as f64
    } else {
        0.0
    };
    let mut boxes = vec![Box {
        node: 0,
        x: 0.0,
        w: width,
        row: 0,
        merged: None,
    }];
    struct Open {
        next_x: f64,
        narrow: Option<Box>,
    }
    fn flush(o: &mut Open, boxes: &mut Vec<Box>) {
        if let Some(b) = o.narrow.take() {
            if b.w >= 0.5 {
                boxes.push(b);
            }
        }
    }
    let mut open = vec![Open {
        next_x: 0.0,
        narrow: None,
    }];
    for i in 1..tree.len() {
        let d = tree.depth[i] as usize;
        if d > open.len() {
            continue;
        }
        while open.len() > d {
            let mut o = open.pop().expect("deeper than d");
            flush(&mut o, &mut boxes);
        }
        let parent = open.last_mut().expect("the root stays open");
        let w = tree.total[i] as f64 * scale;
        let x = parent.next_x;
        parent.next_x += w;
        if w < MIN_W {
            let b = parent.narrow.get_or_insert(Box {
                node: i,
                x,
                w: 0.0,
                row: d,
                merged: Some((0, 0)),
            });
            b.w += w;
            if let Some((count, value)) = &mut b.merged {
                *count += 1;
                *value += tree.total[i];
            }
        } else {
            flush(parent, &mut boxes);
            boxes.push(Box {
                node: i,
                x,
                w,
                row: d,
                merged: None,
            });
            open.push(Open {
                next_x: x,
                narrow: None,
            });
        }
    }
    while let Some(mut o) = open.pop() {
        flush(&mut o, &mut boxes);
    }
    boxes
}

/// The label that fits in `room` pixels: the name, or its start and "…", or nothing below 3 glyphs.
fn fit(name: &str, room: f64) -> String {
    let glyphs = (room / GLYPH).floor().max(0.0) as usize;
    let len = name.chars().count();
    if len <= glyphs {
        name.to_string()
    } else if glyphs >= 3 {
        let mut s: String = name.chars().take(glyphs - 1).collect();
        s.push('…');
        s
    } else {
        String::new()
    }
}

/// The page's colours (html/flame.js): application warm, the JDK muted, allocated classes blue, the
/// hue varied by a hash of the name so that neighbours stay apart.
fn colour(name: &str, kind: FrameKind) -> String {
    let v = f64::from(fnv1a(name)) / 4_294_967_296.0;
    match kind {
        FrameKind::Jdk => format!(
            "hsl({},30%,{}%)",
            fmt(165.0 + 25.0 * v),
            fmt(58.0 + 10.0 * v)
        ),
        FrameKind::Allocated => {
            format!(
                "hsl({},75%,{}%)",
                fmt(205.0 + 25.0 * v),
                fmt(65.0 + 10.0 * v)
            )
        }
        FrameKind::App => format!(
            "hsl({},85%,{}%)",
            fmt(12.0 + 30.0 * v),
            fmt(58.0 + 10.0 * v)
        ),
    }
}

/// FNV-1a over UTF-16 code units, as the page hashes (JavaScript strings are UTF-16).
fn fnv1a(s: &str) -> u32 {
    let mut h: u32 = 2_166_136_261;
    for u in s.encode_utf16() {
        h = (h ^ u32::from(u)).wrapping_mul(16_777_619);
    }
    h
}

/// One decimal, without a trailing ".0": coordinates stay short and the output byte-for-byte stable.
fn fmt(v: f64) -> String {
    let s = format!("{v:.1}");
    match s.strip_suffix(".0") {
        Some(i) => i.to_string(),
        None => s,
    }
}

fn fmt_int(v: u64) -> String {
    let digits = v.to_string();
    let mut s = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            s.push(',');
        }
        s.push(c);
    }
    s
}

fn fmt_value(v: u64, unit: &str) -> String {
    format!("{} {unit}", fmt_int(v))
}

fn pct(part: u64, whole: u64) -> String {
    if whole == 0 {
        return "0.00%".to_string();
    }
    format!("{:.2}%", 100.0 * part as f64 / whole as f64)
}
