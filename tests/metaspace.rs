//! Room in metaspace for the agent's own class metadata (agent/src/metaspace.rs): a `MetaspaceSize` the user
//! left at its default is raised by the agent's share before the VM reads it, and shows as set by
//! ergonomics; one the user gave is kept; and a JVM whose classes the agent does not rewrite from the
//! start is left alone. Read back through the JVM's own management bean, on every JDK found.

mod support;

use std::fs;
use std::path::Path;

use support::*;

/// `instr-agent`'s `metaspace::AGENT_METADATA`.
const AGENT_METADATA: u64 = 16 << 20;

const PROGRAM: &str = r#"
import com.sun.management.HotSpotDiagnosticMXBean;
import com.sun.management.VMOption;
import java.lang.management.ManagementFactory;

public class MetaspaceFlag {
    public static void main(String[] args) {
        HotSpotDiagnosticMXBean hs = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
        VMOption o = hs.getVMOption("MetaspaceSize");
        System.out.println(o.getValue() + " " + o.getOrigin());
    }
}
"#;

/// `MetaspaceSize` and its origin as the program reads them, under `options`.
fn metaspace_size(jdk: &Jdk, classes: &Path, options: &[String]) -> (u64, String) {
    let mut args = options.to_vec();
    args.extend([
        "-cp".into(),
        classes.display().to_string(),
        "MetaspaceFlag".into(),
    ]);
    let out = java(jdk, &args);
    check(&format!("{}: {options:?}", jdk.version), &out);
    let stdout = text(&out.stdout);
    let line = stdout.lines().last().unwrap_or_default().to_string();
    let (value, origin) = line
        .split_once(' ')
        .unwrap_or_else(|| panic!("{}: unexpected output {stdout:?}", jdk.version));
    (value.parse().unwrap(), origin.to_string())
}

#[test]
fn a_default_metaspace_size_makes_room_for_the_agent_and_a_given_one_is_kept() {
    for jdk in all_jdks() {
        let dir = scratch(&format!("metaspace-{}", jdk.key()));
        let src = dir.join("MetaspaceFlag.java");
        fs::write(&src, PROGRAM).unwrap();
        let classes = dir.join("classes");
        javac(&jdk, &[src], &classes, &[]);
        let agent = |extra: &str| {
            format!(
                "-agentpath:{}=file={}{extra}",
                agent_lib().display(),
                dir.join("r").display()
            )
        };

        let (default, origin) = metaspace_size(&jdk, &classes, &[]);
        assert_eq!(origin, "DEFAULT", "{}: without the agent", jdk.version);

        for early in ["", ",early=on", ",early=off"] {
            let got = metaspace_size(&jdk, &classes, &[agent(early)]);
            assert_eq!(
                got,
                (default + AGENT_METADATA, "ERGONOMIC".to_string()),
                "{}: the agent with rules/default.yaml{early}",
                jdk.version
            );
        }

        let given = metaspace_size(&jdk, &classes, &["-XX:MetaspaceSize=12m".into(), agent("")]);
        assert_eq!(
            given,
            (12 << 20, "VM_CREATION".to_string()),
            "{}: -XX:MetaspaceSize=12m under the agent",
            jdk.version
        );

        // Nothing rewritten from the start: no metadata of the agent's to make room for.
        for nothing in [",start=off", ",rules=rules/empty.yaml"] {
            let nothing = nothing.replace("rules/", &format!("{}/rules/", workspace().display()));
            let got = metaspace_size(&jdk, &classes, &[agent(&nothing)]);
            assert_eq!(
                got,
                (default, "DEFAULT".to_string()),
                "{}: the agent with{nothing}",
                jdk.version
            );
        }
    }
}
