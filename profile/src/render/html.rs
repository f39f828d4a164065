//! The self-contained HTML flame graph: one file, no network, every view of the profile switchable in
//! the page (docs/REPORTS.md). The stacks of each view are merged into one tree here, in Rust, and the
//! page embeds that tree as JSON (three numbers per distinct frame path: name, depth, self value)
//! with the script that draws it (`html/flame.js`, on a canvas) and its style (`html/flame.css`).

use std::fmt::Write as _;

use crate::flame::FlameView;

pub(crate) mod tree;

use tree::{kind_letter, Names, Tree, ROOT_NAME};

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

/// The data the script reads: the frame names once for every view, then each view's merged tree in
/// preorder as parallel arrays (`name` indexes `names`, -1 for the root; `depth`; `self`, the value of
/// the stacks ending there), or `shape`, the index of an earlier view with the same `name` and `depth`.
/// Totals are sums the page makes, so they are not sent.
fn data_json(title: &str, views: &[FlameView]) -> String {
    let mut names = Names::default();
    let trees: Vec<Tree> = views.iter().map(|v| Tree::build(v, &mut names)).collect();
    let mut s = String::new();
    s.push_str("{\"title\":");
    push_json_str(&mut s, title);
    s.push_str(",\"names\":[");
    for (i, n) in names.names.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        push_json_str(&mut s, n);
    }
    s.push_str("],\"kinds\":\"");
    s.extend(names.kinds.iter().map(|&k| kind_letter(k)));
    s.push_str("\",\"views\":[");
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
            join(
                &mut s,
                t.name
                    .iter()
                    .map(|&n| if n == ROOT_NAME { -1 } else { i64::from(n) }),
            );
            s.push_str("],\"depth\":[");
            join(&mut s, t.depth.iter());
            s.push(']');
        }
        s.push_str(",\"self\":[");
        // u64 values above 2^53 lose precision in JavaScript; that is 104 days of nanoseconds.
        join(&mut s, t.self_value.iter());
        s.push_str("]}");
    }
    s.push_str("]}");
    s
}

fn join<T: std::fmt::Display>(s: &mut String, values: impl Iterator<Item = T>) {
    for (i, v) in values.enumerate() {
        if i > 0 {
            s.push(',');
        }
        let _ = write!(s, "{v}");
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
