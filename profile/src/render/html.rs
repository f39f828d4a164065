//! The self-contained HTML flame graph: one file, no network, every view of the profile switchable in
//! the page (docs/REPORTS.md). The stacks of each view are merged into one tree here, in Rust, and the
//! page embeds that tree as JSON (three numbers per distinct frame path: name, depth, self value)
//! with the script that draws it (`html/flame.js`, on a canvas) and its style (`html/flame.css`).

use std::fmt::Write as _;

use crate::flame::FlameView;

pub(crate) mod tree;

use super::collapsed::{itoa_buffer, Digits};
use tree::{kind_letter, Names, Tree, MERGED_NAME, ROOT_NAME};

const SCRIPT: &str = include_str!("html/flame.js");
const STYLE: &str = include_str!("html/flame.css");

/// The page for `views` (the first one shown), titled `title`.
pub fn render(title: &str, views: &[FlameView]) -> String {
    let data = data_json(title, views);
    let title = escape_html(title);
    let mut s = String::with_capacity(data.len() + SCRIPT.len() + STYLE.len() + 2048);
    s.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    s.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    // Nothing may load from elsewhere: the page must work from file:// and offline.
    s.push_str("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'\">\n");
    let _ = writeln!(s, "<title>{title}</title>");
    let _ = writeln!(s, "<style>\n{STYLE}</style>\n</head>\n<body>\n<header>");
    let _ = writeln!(s, "<h1>{title}</h1>");
    s.push_str(concat!(
        "<div class=\"controls\">\n",
        "<label>View <select id=\"view\"></select></label>\n",
        "<label><input type=\"checkbox\" id=\"invert\"> Inverted (callers, by leaf)</label>\n",
        "<input id=\"search\" type=\"search\" placeholder=\"Search: substring, or /regex/\" spellcheck=\"false\">\n",
        "<button id=\"reset\" disabled>Reset zoom</button>\n",
        "<span class=\"legend\"><span class=\"a\">application</span><span class=\"j\">JDK</span>",
        "<span class=\"c\">allocated class</span><span class=\"m\">match</span></span>\n",
        "</div>\n",
        "<div class=\"status\"><span id=\"total\"></span><span id=\"zoom\"></span><span id=\"matched\"></span></div>\n",
        "</header>\n",
        "<div id=\"chart\"><canvas id=\"flame\"></canvas></div>\n",
        "<div id=\"tip\" hidden></div>\n",
    ));
    s.push_str("<script type=\"application/json\" id=\"instr-data\">");
    s.push_str(&data);
    s.push_str("</script>\n<script>\n");
    s.push_str(SCRIPT);
    s.push_str("</script>\n</body>\n</html>\n");
    s
}

/// Frames narrower than this share of their view's total (1/N) are merged with their narrow siblings
/// when the page is written, in pages whose views have more than 20,000 tree nodes together: 0.1 px on
/// a 2,000 px wide chart, so nothing that could be seen without zooming in twenty times is lost, and a
/// page of 100,000 scattered stacks carries thousands of nodes rather than a million. The merged node
/// keeps their exact sum, so every total above it is exact.
pub const MERGE_BELOW: u64 = 20_000;

/// The data the script reads: the frame names once for every view, then each view's merged tree in
/// preorder as parallel arrays (`name` indexes `names`, -1 for the root, -2 for frames merged because
/// they are too small to see; `depth`; `self`, the value of the stacks ending there), or `shape`, the
/// index of an earlier view with the same `name` and `depth`. Totals are sums the page makes, so they
/// are not sent.
fn data_json(title: &str, views: &[FlameView]) -> String {
    let mut names = Names::default();
    let mut trees: Vec<Tree> = Tree::build_all(views, &mut names, Some(MERGE_BELOW));
    // Only the names a tree shows, numbered as first met: a filtered profile's views share a frame
    // table with frames no stack reaches any more.
    let mut page_id = vec![u32::MAX; names.names.len()];
    let mut used: Vec<u32> = Vec::new();
    for t in &mut trees {
        for n in &mut t.name {
            if *n == ROOT_NAME || *n == MERGED_NAME {
                continue;
            }
            let id = &mut page_id[*n as usize];
            if *id == u32::MAX {
                *id = used.len() as u32;
                used.push(*n);
            }
            *n = *id;
        }
    }
    let size: usize = trees.iter().map(|t| t.len() * 16).sum();
    let mut s = String::with_capacity(size + 64 * used.len() + 1024);
    s.push_str("{\"title\":");
    push_json_str(&mut s, title);
    s.push_str(",\"names\":[");
    for (i, &n) in used.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        push_json_str(&mut s, &names.names[n as usize]);
    }
    s.push_str("],\"kinds\":\"");
    s.extend(used.iter().map(|&n| kind_letter(names.kinds[n as usize])));
    s.push_str("\",\"views\":[");
    let mut digits = itoa_buffer();
    for (i, (v, t)) in views.iter().zip(&trees).enumerate() {
        if i > 0 {
            s.push(',');
        }
        s.push_str("{\"id\":");
        push_json_str(&mut s, v.id);
        s.push_str(",\"title\":");
        push_json_str(&mut s, v.title);
        s.push_str(",\"unit\":");
        push_json_str(&mut s, v.unit);
        let _ = write!(s, ",\"total\":{},\"nodes\":{}", t.total[0], t.len());
        // Views of the same stacks (objects and bytes; calls, CPU and wall) have the same tree but
        // for its values: the tree's shape is sent once, and the later views name the view holding it.
        let same = trees[..i]
            .iter()
            .position(|u| u.name == t.name && u.depth == t.depth);
        if let Some(j) = same {
            let _ = write!(s, ",\"shape\":{j}");
        } else {
            s.push_str(",\"name\":[");
            for (k, &n) in t.name.iter().enumerate() {
                if k > 0 {
                    s.push(',');
                }
                match n {
                    ROOT_NAME => s.push_str("-1"),
                    MERGED_NAME => s.push_str("-2"),
                    n => s.push_str(digits.format(u64::from(n))),
                }
            }
            s.push_str("],\"depth\":[");
            join(&mut s, &mut digits, t.depth.iter().map(|&d| u64::from(d)));
            s.push(']');
        }
        s.push_str(",\"self\":[");
        // u64 values above 2^53 lose precision in JavaScript; that is 104 days of nanoseconds.
        join(&mut s, &mut digits, t.self_value.iter().copied());
        s.push_str("]}");
    }
    s.push_str("]}");
    s
}

fn join(s: &mut String, digits: &mut Digits, values: impl Iterator<Item = u64>) {
    for (i, v) in values.enumerate() {
        if i > 0 {
            s.push(',');
        }
        s.push_str(digits.format(v));
    }
}

/// A JSON string that is also safe inside `<script>`: `<`, `>` and `&` become `\u003c`-style escapes
/// (legal in any JSON string), so no frame name, whatever it holds, can close the script element or
/// open a comment; JSON.parse reads them back unchanged.
fn push_json_str(s: &mut String, text: &str) {
    let json = serde_json::to_string(text).expect("a string serialises");
    for c in json.chars() {
        match c {
            '<' => s.push_str("\\u003c"),
            '>' => s.push_str("\\u003e"),
            '&' => s.push_str("\\u0026"),
            c => s.push(c),
        }
    }
}

pub(crate) fn escape_html(text: &str) -> String {
    let mut s = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => s.push_str("&lt;"),
            '>' => s.push_str("&gt;"),
            '&' => s.push_str("&amp;"),
            '"' => s.push_str("&quot;"),
            '\'' => s.push_str("&#39;"),
            c => s.push(c),
        }
    }
    s
}
