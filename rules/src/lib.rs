//! Rules files: the YAML that selects which probes are on and which classes, methods and allocation
//! sites they apply to. `rules/README.md` documents the schema and the pattern language.
//!
//! [`Rules`] is what the agent and `rewrite-class` hold after parsing; it answers the rewriter's
//! [`Selection`] questions and the agent's run-time allocation-site filter.

#![forbid(unsafe_code)]

mod error;
mod filter;
mod glob;
mod pattern;
mod schema;
mod validate;

use std::path::Path;

use instr_rewriter::probes::Selection;

pub use error::RulesError;
pub use pattern::{Pattern, PATTERN_SYNTAX};

use filter::Filter;

/// `depth` when a rules file does not set it.
pub const DEFAULT_DEPTH: u32 = 4;
/// The largest `depth` accepted.
pub const MAX_DEPTH: u32 = 64;
/// `output` when a rules file does not set it.
pub const DEFAULT_OUTPUT: &str = "instr-%p";

/// Method access flags that the method filter looks at.
pub const ACC_BRIDGE: u16 = 0x0040;
pub const ACC_SYNTHETIC: u16 = 0x1000;

/// A parsed and validated rules file.
#[derive(Debug, Clone)]
pub struct Rules {
    objects: bool,
    arrays: bool,
    methods: bool,
    method_filter: Filter,
    bridges: bool,
    synthetic: bool,
    allocation_filter: Filter,
    depth: u32,
    /// Live-object tracking: 0 off, 1 exact, N sampled one in N.
    live: u32,
    output: String,
}

impl Rules {
    /// Reads and parses a rules file; errors name the file as given.
    pub fn from_file(path: &Path) -> Result<Rules, RulesError> {
        let origin = path.display().to_string();
        let bytes = std::fs::read(path).map_err(|error| {
            RulesError::whole(
                &origin,
                format!("cannot read the rules file: {error}"),
                "check the path given to the agent's `rules=` option or `--rules`".to_owned(),
            )
        })?;
        let text = String::from_utf8(bytes).map_err(|error| {
            RulesError::whole(
                &origin,
                format!(
                    "the file is not UTF-8 (invalid byte at offset {})",
                    error.utf8_error().valid_up_to()
                ),
                "save the rules file as UTF-8".to_owned(),
            )
        })?;
        Rules::parse(&text, &origin)
    }

    /// Parses rules from `text`; `origin` names it in error messages.
    pub fn parse(text: &str, origin: &str) -> Result<Rules, RulesError> {
        let mut options = serde_saphyr::Options::default();
        // `on`/`yes` as booleans surprise people; require the spelling the README uses.
        options.strict_booleans = true;
        options.duplicate_keys = serde_saphyr::DuplicateKeyPolicy::Error;
        options.with_snippet = false;
        let file: Option<schema::RulesFile> = serde_saphyr::from_str_with_options(text, options)
            .map_err(|error| RulesError::from_yaml(origin, &error))?;
        // An empty file, or one of comments only, is no document at all: it selects nothing.
        validate::build(file.unwrap_or_default(), origin)
    }

    /// Rules that select nothing: every probe off. Equal to an empty rules file.
    pub fn empty() -> Rules {
        Rules {
            objects: false,
            arrays: false,
            methods: false,
            method_filter: Filter::default(),
            bridges: false,
            synthetic: false,
            allocation_filter: Filter::everything(),
            depth: DEFAULT_DEPTH,
            live: 0,
            output: DEFAULT_OUTPUT.to_owned(),
        }
    }

    /// Whether the `java.lang.Object.<init>` allocation probe is on.
    pub fn objects(&self) -> bool {
        self.objects
    }

    /// Whether array-allocation sites get probes.
    pub fn arrays(&self) -> bool {
        self.arrays
    }

    /// Whether method entry/exit probes are on.
    pub fn methods(&self) -> bool {
        self.methods
    }

    /// Whether each `new` gets a site probe: objects are tracked and the depth asks for at least the
    /// allocating frame. At depth 0 objects are counted per class only.
    pub fn object_sites(&self) -> bool {
        self.objects && self.depth > 0
    }

    /// Live-object tracking: 0 off, 1 every object (exact), N one in N (reports scale by N).
    pub fn live(&self) -> u32 {
        self.live
    }

    /// Whether objects built at a `new` site are handed to the agent once constructed, to be tagged
    /// with their site for live tracking.
    pub fn live_object_sites(&self) -> bool {
        self.object_sites() && self.live > 0
    }

    /// Stack frames recorded per allocation site.
    pub fn depth(&self) -> u32 {
        self.depth
    }

    /// The report path template as written (`%p` not yet expanded).
    pub fn output(&self) -> &str {
        &self.output
    }

    /// The report path prefix for process `pid`: `%p` becomes the pid and `%%` a `%`. Any other
    /// `%` is kept as is (only templates set through [`Rules::set_output`] can hold one).
    pub fn output_path(&self, pid: u32) -> String {
        let mut path = String::with_capacity(self.output.len() + 8);
        let mut chars = self.output.chars().peekable();
        while let Some(c) = chars.next() {
            match (c, chars.peek()) {
                ('%', Some('p')) => {
                    path.push_str(&pid.to_string());
                    chars.next();
                }
                ('%', Some('%')) => {
                    path.push('%');
                    chars.next();
                }
                _ => path.push(c),
            }
        }
        path
    }

    /// Allocation-site filter, applied by the agent at runtime for Object.<init> allocations: whether
    /// an allocation made in this method (the one that executed `new`) is recorded. Names are internal
    /// (`java/lang/String`).
    pub fn allocation_site_selected(
        &self,
        class_internal: &[u8],
        method: &[u8],
        descriptor: &[u8],
    ) -> bool {
        self.allocation_filter
            .selects(class_internal, method, descriptor)
    }

    /// Same for a method probe, with bridge/synthetic/lambda logic. access = JVM access flags
    /// (ACC_BRIDGE 0x0040, ACC_SYNTHETIC 0x1000). A bridge method is governed by `bridges` alone,
    /// though javac also marks it synthetic; any other synthetic method by `synthetic`, except lambda
    /// bodies (`lambda$…`), which hold user code and are selected like ordinary methods.
    pub fn method_selected(
        &self,
        class_internal: &[u8],
        method: &[u8],
        descriptor: &[u8],
        access: u16,
    ) -> bool {
        let kind_allowed = if access & ACC_BRIDGE != 0 {
            self.bridges
        } else if access & ACC_SYNTHETIC != 0 {
            self.synthetic || method.starts_with(b"lambda$")
        } else {
            true
        };
        kind_allowed
            && self
                .method_filter
                .selects(class_internal, method, descriptor)
    }

    /// Overrides `depth` from the agent's inline option string (`depth=8`).
    pub fn set_depth(&mut self, depth: u32) -> Result<(), RulesError> {
        match validate::depth_in_range(i64::from(depth)) {
            Some(depth) => {
                self.depth = depth;
                Ok(())
            }
            None => Err(RulesError::whole(
                "agent option `depth`",
                format!("depth {depth} is out of range"),
                validate::depth_hint(),
            )),
        }
    }

    /// Overrides `live` from the agent's inline option string (`live=exact`, `live=100`).
    pub fn set_live(&mut self, live: u32) {
        self.live = live;
    }

    /// Overrides `output` from the agent's inline option string (`file=out-%p` or `output=…`).
    pub fn set_output(&mut self, output: String) {
        self.output = output;
    }
}

impl Default for Rules {
    fn default() -> Rules {
        Rules::empty()
    }
}

impl Selection for Rules {
    fn objects(&self) -> bool {
        self.objects
    }

    fn class_wanted(&self, class: &[u8]) -> bool {
        ((self.arrays || self.object_sites()) && self.allocation_filter.may_select_in(class))
            || (self.methods && self.method_filter.may_select_in(class))
    }

    // Allocation sites are fixed in the bytecode, so they are filtered here, at rewrite time: a
    // site the rules exclude gets no probe and costs nothing.
    fn arrays(&self, class: &[u8], method: &[u8], descriptor: &[u8]) -> bool {
        self.arrays && self.allocation_site_selected(class, method, descriptor)
    }

    fn object_sites(&self, class: &[u8], method: &[u8], descriptor: &[u8]) -> bool {
        self.object_sites() && self.allocation_site_selected(class, method, descriptor)
    }

    fn live_objects(&self) -> bool {
        self.live_object_sites()
    }

    fn methods(&self, class: &[u8], method: &[u8], descriptor: &[u8], access: u16) -> bool {
        self.methods && self.method_selected(class, method, descriptor, access)
    }
}
