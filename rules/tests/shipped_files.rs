//! The rules files shipped in rules/ parse and select what their comments say.

use std::path::{Path, PathBuf};

use instr_rewriter::probes::Selection;
use instr_rules::Rules;

fn shipped(name: &str) -> Rules {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(name);
    Rules::from_file(&path).unwrap_or_else(|error| panic!("{error}"))
}

#[test]
fn every_shipped_yaml_parses() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut count = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "yaml") {
            Rules::from_file(&path).unwrap_or_else(|error| panic!("{error}"));
            count += 1;
        }
    }
    assert!(
        count >= 4,
        "expected default, all, empty and methods-example; found {count}"
    );
}

#[test]
fn all_selects_everything() {
    let rules = shipped("all.yaml");
    assert!(rules.objects() && rules.arrays() && rules.methods());
    assert!(Selection::objects(&rules));
    for class in [
        "java/lang/String",
        "java/lang/Object",
        "Main",
        "jdk/internal/misc/Unsafe",
    ] {
        assert!(rules.class_wanted(class.as_bytes()), "{class}");
    }
    assert!(Selection::methods(
        &rules,
        b"java/lang/String",
        b"length",
        b"()I",
        0x0001
    ));
    assert!(Selection::arrays(
        &rules,
        b"java/lang/String",
        b"length",
        b"()I"
    ));
    // Bridges and synthetic methods too.
    assert!(Selection::methods(
        &rules,
        b"a/B",
        b"compareTo",
        b"(Ljava/lang/Object;)I",
        0x1041
    ));
    assert!(Selection::methods(
        &rules,
        b"a/B",
        b"access$000",
        b"(La/B;)I",
        0x1008
    ));
    assert!(rules.allocation_site_selected(
        b"jdk/internal/misc/Unsafe",
        b"allocateInstance",
        b"(Ljava/lang/Class;)Ljava/lang/Object;"
    ));
    assert_eq!(rules.depth(), 4);
}

#[test]
fn empty_selects_nothing() {
    let rules = shipped("empty.yaml");
    assert!(!rules.objects() && !rules.arrays() && !rules.methods());
    assert!(!Selection::objects(&rules));
    assert!(!rules.class_wanted(b"java/lang/String"));
    assert!(!Selection::methods(
        &rules,
        b"java/lang/String",
        b"length",
        b"()I",
        0
    ));
    assert!(!Selection::arrays(
        &rules,
        b"java/lang/String",
        b"length",
        b"()I"
    ));
    assert!(!rules.method_selected(b"java/lang/String", b"length", b"()I", 0));
    assert_eq!(rules.output(), "instr-%p");
    assert_eq!(rules.depth(), 4);
}

#[test]
fn default_tracks_allocations_outside_jdk_plumbing() {
    let rules = shipped("default.yaml");
    assert!(rules.objects() && rules.arrays());
    assert!(!rules.methods());
    assert!(!Selection::methods(
        &rules,
        b"com/example/App",
        b"main",
        b"([Ljava/lang/String;)V",
        9
    ));
    assert!(!rules.allocation_site_selected(
        b"jdk/internal/misc/Unsafe",
        b"allocateInstance",
        b"(Ljava/lang/Class;)Ljava/lang/Object;"
    ));
    assert!(!rules.allocation_site_selected(b"java/lang/invoke/LambdaForm", b"<init>", b"()V"));
    assert!(!rules.allocation_site_selected(
        b"sun/launcher/LauncherHelper",
        b"checkAndLoadMain",
        b"(ZILjava/lang/String;)Ljava/lang/Class;"
    ));
    assert!(rules.allocation_site_selected(b"com/example/App", b"main", b"([Ljava/lang/String;)V"));
    assert!(rules.allocation_site_selected(
        b"java/util/ArrayList",
        b"grow",
        b"(I)[Ljava/lang/Object;"
    ));
    assert!(!rules.class_wanted(b"jdk/internal/misc/Unsafe"));
    assert!(rules.class_wanted(b"com/example/App"));
    assert_eq!(rules.depth(), 1);
    assert!(rules.object_sites());
    assert_eq!(rules.output_path(42), "instr-42");
}

#[test]
fn methods_example_selects_its_application() {
    let rules = shipped("methods-example.yaml");
    assert!(rules.methods());
    assert!(rules.method_selected(
        b"com/example/shop/Cart",
        b"add",
        b"(Lcom/example/shop/Item;)V",
        1
    ));
    assert!(rules.method_selected(b"com/example/shop/db/Store", b"load", b"()V", 1));
    assert!(!rules.method_selected(b"com/example/shop/generated/Msg", b"parse", b"()V", 1));
    assert!(!rules.method_selected(
        b"com/example/shop/Cart",
        b"toString",
        b"()Ljava/lang/String;",
        1
    ));
    assert!(rules.method_selected(
        b"com/example/shop/db/Store",
        b"toString",
        b"()Ljava/lang/String;",
        1
    ));
    // One class: every method of org.acme.cache.Cache, none of its nested class.
    assert!(rules.method_selected(
        b"org/acme/cache/Cache",
        b"getIfPresent",
        b"(Ljava/lang/Object;)Ljava/lang/Object;",
        1
    ));
    assert!(rules.method_selected(
        b"org/acme/cache/Cache",
        b"remove",
        b"(Ljava/lang/Object;)V",
        1
    ));
    assert!(!rules.method_selected(b"org/acme/cache/Cache$Entry", b"get", b"()V", 1));
    // One method: one overload of org.acme.json.Json#parse, nothing else of that class.
    assert!(rules.method_selected(
        b"org/acme/json/Json",
        b"parse",
        b"(Ljava/lang/String;)Ljava/lang/Object;",
        1
    ));
    assert!(!rules.method_selected(
        b"org/acme/json/Json",
        b"parse",
        b"(Ljava/io/Reader;)Ljava/lang/Object;",
        1
    ));
    assert!(!rules.method_selected(
        b"org/acme/json/Json",
        b"write",
        b"(Ljava/lang/Object;)Ljava/lang/String;",
        1
    ));
    assert!(rules.class_wanted(b"org/acme/cache/Cache"));
    assert!(!rules.class_wanted(b"org/acme/cache/Other"));
    assert!(!rules.class_wanted(b"com/example/shop/generated/Msg"));
    assert_eq!(rules.depth(), 8);
    assert_eq!(rules.output_path(7), "/tmp/shop-profile-7");
}

#[test]
fn readme_yaml_examples_parse() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let mut blocks = 0;
    for block in readme.split("```yaml\n").skip(1) {
        let yaml = block.split("```").next().unwrap();
        Rules::parse(yaml, "README.md").unwrap_or_else(|error| panic!("{error}\n{yaml}"));
        blocks += 1;
    }
    assert!(blocks >= 4, "found {blocks} yaml blocks");
}

#[test]
fn readme_error_examples_are_real() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let unknown = Rules::parse(
        "probes: [methods]\nmethods:\n  incude: []\n",
        "rules/my.yaml",
    )
    .unwrap_err();
    assert!(readme.contains(&unknown.to_string()), "{unknown}");
    let pattern = Rules::parse(
        "probes: [methods]\nmethods:\n  include:\n    - com.foo.**\n    - com/foo/Bar\n",
        "rules/my.yaml",
    )
    .unwrap_err();
    let shown = pattern.to_string();
    let prefix = &shown[..shown.find("e.g. `com.example").unwrap()];
    assert!(readme.contains(prefix), "{shown}");
}
