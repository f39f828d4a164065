//! The rewriter's view: `Selection`, especially the per-class fast path, plus the agent overrides.

use instr_rewriter::probes::Selection;
use instr_rules::Rules;

fn parse(text: &str) -> Rules {
    Rules::parse(text, "s.yaml").unwrap_or_else(|error| panic!("{error}"))
}

#[test]
fn class_wanted_is_false_when_no_include_can_match() {
    let rules = parse("probes: [methods]\nmethods:\n  include: [\"com.foo.**\"]\n");
    assert!(!rules.class_wanted(b"org/bar/X"));
    assert!(!rules.class_wanted(b"com/foobar/X"));
    assert!(rules.class_wanted(b"com/foo/X"));
    assert!(rules.class_wanted(b"com/foo/a/b/X"));
}

#[test]
fn class_wanted_follows_each_probe_filter() {
    // Arrays on: the allocation filter decides, even though methods name other classes.
    let rules = parse(
        "probes: [arrays, methods]\nmethods:\n  include: [\"com.foo.**\"]\nallocations:\n  include: [\"org.**\"]\n",
    );
    assert!(rules.class_wanted(b"org/bar/X"));
    assert!(rules.class_wanted(b"com/foo/X"));
    assert!(!rules.class_wanted(b"net/X"));
    // Objects per class only (depth 0): only Object.<init> is rewritten, no other class.
    let rules = parse("probes: [objects]\nallocations:\n  depth: 0\n");
    assert!(Selection::objects(&rules));
    assert!(!rules.class_wanted(b"org/bar/X"));
    // Objects with sites (depth >= 1): the allocation filter decides which classes get `new` probes.
    let rules = parse("probes: [objects]\nallocations:\n  include: [\"org.**\"]\n  depth: 1\n");
    assert!(rules.class_wanted(b"org/bar/X"));
    assert!(!rules.class_wanted(b"net/X"));
}

#[test]
fn class_wanted_honours_whole_class_excludes_only() {
    let rules = parse(
        "probes: [methods]\nmethods:\n  include: [\"com.foo.**\"]\n  exclude: [\"com.foo.gen.**\", \"com.foo.Bar#*\", \"com.foo.Baz#run\"]\n",
    );
    assert!(!rules.class_wanted(b"com/foo/gen/X"));
    // `#*` excludes every method, but the fast path may say yes conservatively; `#run` must.
    assert!(rules.class_wanted(b"com/foo/Baz"));
    assert!(!Selection::methods(&rules, b"com/foo/Bar", b"m", b"()V", 1));
    assert!(Selection::methods(&rules, b"com/foo/Baz", b"m", b"()V", 1));
}

#[test]
fn method_level_include_wants_its_class_only() {
    let rules = parse("probes: [methods]\nmethods:\n  include: [\"a.B#get*\"]\n");
    assert!(rules.class_wanted(b"a/B"));
    assert!(!rules.class_wanted(b"a/C"));
    assert!(!rules.class_wanted(b"a/B$Inner"));
}

#[test]
fn arrays_apply_the_allocation_site_filter() {
    let rules = parse(
        "probes: [arrays]\nallocations:\n  include: [\"app.**\"]\n  exclude: [\"app.Gen#*\"]\n",
    );
    assert!(Selection::arrays(&rules, b"app/Main", b"main", b"()V"));
    assert!(!Selection::arrays(&rules, b"app/Gen", b"make", b"()V"));
    assert!(!Selection::arrays(&rules, b"lib/X", b"make", b"()V"));
    let off = parse("probes: [objects]\n");
    assert!(!Selection::arrays(&off, b"app/Main", b"main", b"()V"));
    assert!(off.allocation_site_selected(b"app/Main", b"main", b"()V"));
}

#[test]
fn empty_equals_an_empty_file() {
    for rules in [Rules::empty(), parse(""), parse("# only a comment\n\n")] {
        assert!(!rules.objects() && !rules.arrays() && !rules.methods());
        assert!(!rules.class_wanted(b"java/lang/Object"));
        assert_eq!(rules.depth(), 4);
        assert_eq!(rules.output(), "instr-%p");
    }
}

#[test]
fn output_template_expansion() {
    let mut rules = parse("output: \"/tmp/run-%p-100%%\"\n");
    assert_eq!(rules.output(), "/tmp/run-%p-100%%");
    assert_eq!(rules.output_path(1234), "/tmp/run-1234-100%");
    rules.set_output("file", "x-%p-%p-%%".to_owned()).unwrap();
    assert_eq!(rules.output_path(5), "x-5-5-%");
    // The agent's `file=` is checked as `output` is: these would name files nobody asked for.
    for bad in ["", "%", "a%x", "x-%z%", "reports/", "a\nb"] {
        let error = rules.set_output("file", bad.to_owned()).unwrap_err();
        assert!(
            error.to_string().starts_with("agent option `file`: `file`"),
            "{error}"
        );
        assert_eq!(rules.output_path(5), "x-5-5-%", "{bad:?} was kept");
    }
    assert_eq!(Rules::empty().output_path(99), "instr-99");
}

#[test]
fn depth_override_is_range_checked() {
    let mut rules = parse("allocations:\n  depth: 16\n");
    assert_eq!(rules.depth(), 16);
    rules.set_depth(8).unwrap();
    assert_eq!(rules.depth(), 8);
    for bad in [65, u32::MAX] {
        let error = rules.set_depth(bad).unwrap_err();
        assert!(error.to_string().contains("out of range"), "{error}");
        assert!(!error.to_string().contains('\n'));
    }
    assert_eq!(rules.depth(), 8);
}

#[test]
fn rules_can_be_shared_across_threads() {
    fn shareable<T: Send + Sync + 'static>() {}
    shareable::<Rules>();
    let selection: Box<dyn Selection> = Box::new(Rules::empty());
    assert!(!selection.objects());
}
