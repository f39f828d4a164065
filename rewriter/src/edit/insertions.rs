//! What an edit inserts into one method: code at entry, before instructions and after instructions.

/// Where inserted code goes relative to an instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Place {
    /// Runs before the instruction. A branch to the instruction lands on the inserted code, so an exit
    /// probe before a `return` also runs when the return is reached by a jump.
    Before,
    /// Runs after the instruction, on the fall-through path only.
    After,
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Point {
    pub pc: u32,
    pub place: Place,
    pub start: u32,
    pub end: u32,
}

/// The insertions planned for one method.
///
/// Inserted snippets must be straight-line and stack-neutral at the point where they run: no branches,
/// no switches, and the operand stack and locals left as found. That is what lets every existing
/// StackMapTable frame stay valid with only its offset changed.
#[derive(Clone, Debug, Default)]
pub struct Insertions {
    pub(crate) entry: Vec<u8>,
    pub(crate) points: Vec<Point>,
    pub(crate) bytes: Vec<u8>,
    pub(crate) extra_stack: u16,
    /// A handler appended after the code that catches everything thrown in `handler_ranges`.
    pub(crate) handler: Vec<u8>,
    pub(crate) handler_ranges: Vec<(u32, u32)>,
    pub(crate) handler_stack: u16,
    /// Set when the caller wants every offset-carrying structure re-encoded even with nothing inserted
    /// (used by tests to prove the encoder is lossless).
    pub(crate) force: bool,
}

impl Insertions {
    pub fn new() -> Self {
        Self::default()
    }

    /// Code that runs once when the method starts; a branch back to offset 0 does not run it again.
    pub fn at_entry(&mut self, code: &[u8]) {
        self.entry.extend_from_slice(code);
    }

    pub fn before(&mut self, pc: u32, code: &[u8]) {
        self.push(pc, Place::Before, code);
    }

    pub fn after(&mut self, pc: u32, code: &[u8]) {
        self.push(pc, Place::After, code);
    }

    fn push(&mut self, pc: u32, place: Place, code: &[u8]) {
        let start = self.bytes.len() as u32;
        self.bytes.extend_from_slice(code);
        self.points.push(Point {
            pc,
            place,
            start,
            end: self.bytes.len() as u32,
        });
    }

    /// Appends `code` after the method's code as a handler for every exception thrown in `ranges`
    /// (original offsets, end exclusive; the end may be the code length). The handler is entered with
    /// the exception alone on the stack, must not fall through (end it with `athrow`) and needs at most
    /// `max_stack` words in all. Its table entries come after the method's own, so those still win,
    /// and its frame is `full_frame([], [java/lang/Throwable])`, valid wherever `this` is initialised:
    /// in a constructor the ranges must start after the `super()`/`this()` call.
    pub fn catch_all(&mut self, ranges: &[(u32, u32)], code: &[u8], max_stack: u16) {
        if ranges.is_empty() {
            return; // unreachable handler code would need a frame of its own
        }
        self.handler_ranges.extend_from_slice(ranges);
        self.handler.extend_from_slice(code);
        self.handler_stack = self.handler_stack.max(max_stack);
    }

    /// Declares that the inserted code needs up to `words` operand-stack words above what is already there.
    pub fn need_stack(&mut self, words: u16) {
        self.extra_stack = self.extra_stack.max(words);
    }

    /// Empties the plan but keeps its buffers, so one value can serve every method of a class.
    pub fn clear(&mut self) {
        self.entry.clear();
        self.points.clear();
        self.bytes.clear();
        self.extra_stack = 0;
        self.handler.clear();
        self.handler_ranges.clear();
        self.handler_stack = 0;
        self.force = false;
    }

    pub fn is_empty(&self) -> bool {
        self.entry.is_empty() && self.points.is_empty() && self.handler.is_empty() && !self.force
    }

    /// Number of insertion points, the entry and the handler included.
    pub fn len(&self) -> usize {
        self.points.len()
            + usize::from(!self.entry.is_empty())
            + usize::from(!self.handler.is_empty())
    }

    pub(crate) fn sorted_points(&mut self) {
        if !self
            .points
            .windows(2)
            .all(|w| (w[0].pc, w[0].place) <= (w[1].pc, w[1].place))
        {
            self.points.sort_by_key(|p| (p.pc, p.place));
        }
    }

    pub(crate) fn snippet(&self, p: &Point) -> &[u8] {
        &self.bytes[p.start as usize..p.end as usize]
    }
}
