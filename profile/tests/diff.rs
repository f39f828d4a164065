//! The diff of two profiles made in the test (no JVM): the text, byte for byte, and what it is built on.

use instr_profile::flame::FrameKind;
use instr_profile::model::{ClassRow, Frame, FrameTable, MethodRow, SiteRow};
use instr_profile::render::diff::{self, Kind};
use instr_profile::Profile;

fn frame(class: &str, method: &str, line: i64) -> Frame {
    Frame {
        class: class.into(),
        method: method.into(),
        descriptor: "()V".into(),
        file: Some(format!("{class}.java")),
        line: Some(line),
    }
}

fn class(name: &str, instances: u64, bytes: u64) -> ClassRow {
    ClassRow {
        class: name.into(),
        instances,
        bytes,
        ..ClassRow::default()
    }
}

/// A site and its frames, which `profile` numbers in its frame table.
fn site(class: &str, count: u64, bytes: u64, stack: Vec<Frame>) -> (SiteRow, Vec<Frame>) {
    let row = SiteRow {
        class: class.into(),
        count,
        bytes,
        ..SiteRow::default()
    };
    (row, stack)
}

fn method(class: &str, name: &str, enters: u64) -> MethodRow {
    MethodRow {
        class: class.into(),
        method: name.into(),
        descriptor: "()V".into(),
        enters,
        ..MethodRow::default()
    }
}

fn profile(
    pid: u32,
    classes: Vec<ClassRow>,
    sites: Vec<(SiteRow, Vec<Frame>)>,
    methods: Vec<MethodRow>,
) -> Profile {
    let mut table = FrameTable::default();
    let sites = sites
        .into_iter()
        .map(|(row, stack)| SiteRow {
            stack: stack.into_iter().map(|f| table.intern(f)).collect(),
            ..row
        })
        .collect();
    Profile {
        schema: instr_profile::model::SCHEMA.into(),
        pid,
        depth: 2,
        frames: table.frames,
        classes,
        sites,
        methods,
        ..Profile::default()
    }
}

/// Before -> after: Cart doubles, String shrinks, a Receipt site appears (in a new method), int[] grows
/// in bytes only (bigger arrays, as many), the Store.old site and method go away, and Main.main's site
/// moved two lines down (an edit above it): not a change.
fn before_and_after() -> (Profile, Profile) {
    let before = profile(
        100,
        vec![
            class("Cart", 10, 240),
            class("java.lang.String", 100, 2400),
            class("int[]", 4, 4096),
            class("Old", 3, 48),
        ],
        vec![
            site(
                "Cart",
                10,
                240,
                vec![frame("Store", "checkout", 12), frame("Main", "main", 5)],
            ),
            site(
                "java.lang.String",
                100,
                2400,
                vec![frame("Main", "main", 6)],
            ),
            site("int[]", 4, 4096, vec![frame("Main", "main", 7)]),
            site("Old", 3, 48, vec![frame("Store", "old", 3)]),
        ],
        vec![
            method("Main", "main", 1),
            method("Store", "checkout", 10),
            method("Store", "old", 3),
        ],
    );
    let after = profile(
        200,
        vec![
            class("Cart", 20, 480),
            class("java.lang.String", 90, 2160),
            class("int[]", 4, 8192),
            class("Receipt", 1, 16),
        ],
        vec![
            site(
                "Cart",
                20,
                480,
                vec![frame("Store", "checkout", 12), frame("Main", "main", 5)],
            ),
            site("java.lang.String", 90, 2160, vec![frame("Main", "main", 8)]),
            site("int[]", 4, 8192, vec![frame("Main", "main", 9)]),
            site(
                "Receipt",
                1,
                16,
                vec![frame("Store", "print", 40), frame("Main", "main", 10)],
            ),
        ],
        vec![
            method("Main", "main", 1),
            method("Store", "checkout", 20),
            method("Store", "print", 1),
        ],
    );
    (before, after)
}

#[test]
fn the_text_is_the_golden_one() {
    let (before, after) = before_and_after();
    let golden = "\
instr profile diff, before pid 100, after pid 200

CLASSES BEGIN (instances and bytes allocated per class; 3 grew, 2 shrank; largest change first)
 rank     objs +/-       before        after    bytes +/-       before        after  class
    1          +10           10           20         +240          240          480  Cart
    2          -10          100           90         -240         2400         2160  java.lang.String
    3           -3            3            0          -48           48            0  Old
    4           +1            0            1          +16            0           16  Receipt
    5            0            4            4        +4096         4096         8192  int[]
CLASSES END

SITES BEGIN (allocations per site and stack, root;...;allocated class; 3 grew, 2 shrank; largest change first)
 rank    count +/-       before        after    bytes +/-       before        after  site
    1          +10           10           20         +240          240          480  Main.main()V;Store.checkout()V;Cart
    2          -10          100           90         -240         2400         2160  Main.main()V;java.lang.String
    3           -3            3            0          -48           48            0  Store.old()V;Old
    4           +1            0            1          +16            0           16  Main.main()V;Store.print()V;Receipt
    5            0            4            4        +4096         4096         8192  Main.main()V;int[]
SITES END

METHODS BEGIN (calls per method; 2 grew, 1 shrank; largest change first)
 rank    calls +/-       before        after  method
    1          +10           10           20  Store.checkout()V
    2           -3            3            0  Store.old()V
    3           +1            0            1  Store.print()V
METHODS END
";
    assert_eq!(diff::text(&before, &after), golden);
}

#[test]
fn grown_rows_are_counted_by_their_count() {
    let (before, after) = before_and_after();
    let d = diff::compare(&before, &after);
    let over = |n| {
        d.grown_over(n)
            .iter()
            .map(|c| (c.kind, c.name.as_str(), c.growth()))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        over(1),
        [
            (Kind::Class, "Cart", 10),
            (Kind::Site, "Main.main()V;Store.checkout()V;Cart", 10),
            (Kind::Method, "Store.checkout()V", 10),
        ]
    );
    assert_eq!(over(10), []);
    // int[] grew in bytes only: it grew, by no count.
    assert!(d
        .classes
        .iter()
        .any(|c| c.name == "int[]" && c.grew() && c.growth() == 0));
    assert_eq!(
        diff::compare(&before, &before),
        diff::Diff {
            before_pid: 100,
            after_pid: 100,
            ..Default::default()
        }
    );
    assert!(
        diff::text(&before, &before).ends_with("\nno differences in classes, sites or methods\n")
    );
}

#[test]
fn the_flame_views_hold_growth_and_shrinkage() {
    let (before, after) = before_and_after();
    let views = diff::flame(&before, &after);
    let ids: Vec<&str> = views.iter().map(|v| v.id).collect();
    assert_eq!(
        ids,
        [
            "objects_grew",
            "bytes_grew",
            "objects_shrank",
            "bytes_shrank"
        ]
    );
    let stacks = |id: &str| {
        let v = views.iter().find(|v| v.id == id).unwrap();
        v.stacks
            .iter()
            .map(|s| {
                let names: Vec<&str> = v.frames_of(s).map(|f| &*f.name).collect();
                (names.join(";"), s.value)
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(
        stacks("objects_grew"),
        [
            ("Main.main;Store.checkout;Cart".to_string(), 10),
            ("Main.main;Store.print;Receipt".to_string(), 1),
        ]
    );
    assert_eq!(
        stacks("bytes_shrank"),
        [
            ("Main.main;java.lang.String".to_string(), 240),
            ("Store.old;Old".to_string(), 48),
        ]
    );
    assert_eq!(views[0].unit, "objects");
    assert_eq!(
        views[0].frames_of(&views[0].stacks[0]).last().unwrap().kind,
        FrameKind::Allocated
    );
    assert!(diff::flame(&before, &before).is_empty());
}
