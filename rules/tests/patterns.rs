//! The pattern language through the public API, as a table of (pattern, name, selected?).

use instr_rules::Rules;

fn methods_rules(include: &[&str], exclude: &[&str]) -> Rules {
    let list = |items: &[&str]| {
        items
            .iter()
            .map(|p| format!("\"{p}\""))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let text = format!(
        "probes: [methods]\nmethods:\n  include: [{}]\n  exclude: [{}]\n",
        list(include),
        list(exclude)
    );
    Rules::parse(&text, "table.yaml").unwrap_or_else(|error| panic!("{error}"))
}

/// (pattern, class, method, descriptor, selected)
const TABLE: &[(&str, &str, &str, &str, bool)] = &[
    // `*`: one package level.
    ("com.foo.*", "com/foo/Bar", "m", "()V", true),
    ("com.foo.*", "com/foo/Bar$Inner", "m", "()V", true),
    ("com.foo.*", "com/foo/sub/Bar", "m", "()V", false),
    ("com.foo.*", "com/foobar/X", "m", "()V", false),
    // `**`: the package and every subpackage.
    ("com.foo.**", "com/foo/Bar", "m", "()V", true),
    ("com.foo.**", "com/foo/sub/deep/Bar", "m", "()V", true),
    ("com.foo.**", "com/foobar/X", "m", "()V", false),
    ("com.foo.**", "org/foo/Bar", "m", "()V", false),
    ("**", "Main", "main", "([Ljava/lang/String;)V", true),
    ("**", "a/b/c/D", "m", "()V", true),
    // One class, and a class-name glob.
    ("com.foo.Bar", "com/foo/Bar", "m", "()V", true),
    ("com.foo.Bar", "com/foo/Bar$Inner", "m", "()V", false),
    ("com.foo.Bar", "com/foo/BarX", "m", "()V", false),
    ("com.foo.Bar*", "com/foo/Bar", "m", "()V", true),
    ("com.foo.Bar*", "com/foo/Bar$Inner", "m", "()V", true),
    ("com.foo.Bar*", "com/foo/BarFactory", "m", "()V", true),
    ("com.foo.Bar*", "com/foo/Baz", "m", "()V", false),
    ("**.*Test", "com/foo/BarTest", "m", "()V", true),
    ("**.*Test", "com/foo/BarTests", "m", "()V", false),
    // Method globs.
    ("com.foo.Bar#get*", "com/foo/Bar", "get", "()I", true),
    (
        "com.foo.Bar#get*",
        "com/foo/Bar",
        "getName",
        "()Ljava/lang/String;",
        true,
    ),
    (
        "com.foo.Bar#get*",
        "com/foo/Bar",
        "setName",
        "(Ljava/lang/String;)V",
        false,
    ),
    (
        "com.foo.Bar#get*",
        "com/foo/Bar$Inner",
        "getName",
        "()Ljava/lang/String;",
        false,
    ),
    (
        "com.foo.Bar#*Name",
        "com/foo/Bar",
        "setName",
        "(Ljava/lang/String;)V",
        true,
    ),
    ("com.foo.Bar#<init>", "com/foo/Bar", "<init>", "(I)V", true),
    (
        "com.foo.Bar#<init>",
        "com/foo/Bar",
        "<clinit>",
        "()V",
        false,
    ),
    (
        "com.foo.Bar#<clinit>",
        "com/foo/Bar",
        "<clinit>",
        "()V",
        true,
    ),
    (
        "**#main",
        "app/Main",
        "main",
        "([Ljava/lang/String;)V",
        true,
    ),
    ("**#main", "app/Main", "run", "()V", false),
    // Exact descriptors.
    (
        "com.foo.Bar#put(Ljava/lang/Object;)V",
        "com/foo/Bar",
        "put",
        "(Ljava/lang/Object;)V",
        true,
    ),
    (
        "com.foo.Bar#put(Ljava/lang/Object;)V",
        "com/foo/Bar",
        "put",
        "(Ljava/lang/Object;)Z",
        false,
    ),
    (
        "com.foo.Bar#put(Ljava/lang/Object;)V",
        "com/foo/Bar",
        "put",
        "(I)V",
        false,
    ),
    ("com.foo.Bar#*([I)[J", "com/foo/Bar", "conv", "([I)[J", true),
];

#[test]
fn pattern_table() {
    for &(pattern, class, method, descriptor, want) in TABLE {
        let rules = methods_rules(&[pattern], &[]);
        let got = rules.method_selected(
            class.as_bytes(),
            method.as_bytes(),
            descriptor.as_bytes(),
            1,
        );
        assert_eq!(got, want, "{pattern} vs {class}#{method}{descriptor}");
        // The allocation filter uses the same language.
        let text = format!("probes: [arrays]\nallocations:\n  include: [\"{pattern}\"]\n");
        let rules = Rules::parse(&text, "t.yaml").unwrap();
        let got = rules.allocation_site_selected(
            class.as_bytes(),
            method.as_bytes(),
            descriptor.as_bytes(),
        );
        assert_eq!(
            got, want,
            "allocations: {pattern} vs {class}#{method}{descriptor}"
        );
    }
}

#[test]
fn excludes_win_over_includes() {
    let rules = methods_rules(
        &["com.foo.**", "com.foo.gen.Special"],
        &["com.foo.gen.**", "com.foo.Bar#secret*"],
    );
    assert!(rules.method_selected(b"com/foo/Bar", b"open", b"()V", 1));
    assert!(!rules.method_selected(b"com/foo/Bar", b"secretKey", b"()V", 1));
    assert!(!rules.method_selected(b"com/foo/gen/Special", b"m", b"()V", 1));
    assert!(!rules.method_selected(b"com/foo/gen/deep/X", b"m", b"()V", 1));

    let rules = Rules::parse(
        "probes: [objects]\nallocations:\n  exclude: [\"java.**\"]\n",
        "alloc.yaml",
    )
    .unwrap();
    assert!(!rules.allocation_site_selected(
        b"java/util/HashMap",
        b"resize",
        b"()[Ljava/util/HashMap$Node;"
    ));
    assert!(rules.allocation_site_selected(b"app/Main", b"main", b"([Ljava/lang/String;)V"));
}

#[test]
fn include_defaults_differ_between_sections() {
    // No methods include: nothing. No allocations include: everything.
    let rules = Rules::parse(
        "probes: [methods, arrays]\nmethods:\n  bridges: true\n",
        "d.yaml",
    )
    .unwrap();
    assert!(!rules.method_selected(b"a/B", b"m", b"()V", 1));
    assert!(rules.allocation_site_selected(b"a/B", b"m", b"()V"));
    // An explicit empty list is empty in both.
    let rules = Rules::parse("allocations:\n  include: []\n", "d.yaml").unwrap();
    assert!(!rules.allocation_site_selected(b"a/B", b"m", b"()V"));
}

#[test]
fn methods_section_without_methods_probe_is_unused() {
    let rules = Rules::parse(
        // Depth 0: objects are counted per class only, so no class needs a site probe either.
        "probes: [objects]\nallocations:\n  depth: 0\nmethods:\n  include: [\"**\"]\n",
        "u.yaml",
    )
    .unwrap();
    assert!(!rules.methods());
    assert!(!instr_rewriter::probes::Selection::methods(
        &rules, b"a/B", b"m", b"()V", 1
    ));
    assert!(!instr_rewriter::probes::Selection::class_wanted(
        &rules, b"a/B"
    ));
}

#[test]
fn object_sites_follow_depth_and_the_allocation_filter() {
    let rules = Rules::parse(
        "probes: [objects]\nallocations:\n  exclude: [\"a.Hidden\"]\n  depth: 1\n  live: 10\n",
        "sites.yaml",
    )
    .unwrap();
    use instr_rewriter::probes::Selection;
    assert!(rules.object_sites());
    assert!(Selection::object_sites(&rules, b"a/B", b"m", b"()V"));
    assert!(!Selection::object_sites(&rules, b"a/Hidden", b"m", b"()V"));
    assert!(Selection::live_objects(&rules));
    assert_eq!(rules.live(), 10);
    assert!(Selection::class_wanted(&rules, b"a/B"));
    let flat = Rules::parse("probes: [objects]\nallocations:\n  depth: 0\n", "flat.yaml").unwrap();
    assert!(!Selection::object_sites(&flat, b"a/B", b"m", b"()V"));
    let bad = Rules::parse("allocations:\n  live: -1\n", "bad.yaml").unwrap_err();
    assert!(bad.to_string().contains("live -1 is out of range"), "{bad}");
}

#[test]
fn heap_sampled_live_tracking_needs_no_built_probe_and_excludes_live() {
    use instr_rewriter::probes::Selection;
    let rules = Rules::parse(
        "probes: [objects]\nallocations:\n  depth: 1\n  live_bytes: 65536\n",
        "bytes.yaml",
    )
    .unwrap();
    assert_eq!((rules.live(), rules.live_bytes()), (0, 65536));
    // The JVM picks the samples: no object is handed over after its constructor.
    assert!(!Selection::live_objects(&rules));
    let both = Rules::parse(
        "allocations:\n  live: 10\n  live_bytes: 65536\n",
        "both.yaml",
    )
    .unwrap_err();
    assert!(both.to_string().contains("are both set"), "{both}");
    let zero = Rules::parse("allocations:\n  live_bytes: 0\n", "zero.yaml").unwrap_err();
    assert!(
        zero.to_string().contains("live_bytes 0 is out of range"),
        "{zero}"
    );
    let mut inline = rules.clone();
    inline.set_live(5);
    assert_eq!((inline.live(), inline.live_bytes()), (5, 0));
}
