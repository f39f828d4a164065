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

    /// Declares that the inserted code needs up to `words` operand-stack words above what is already there.
    pub fn need_stack(&mut self, words: u16) {
        self.extra_stack = self.extra_stack.max(words);
    }

    pub fn is_empty(&self) -> bool {
        self.entry.is_empty() && self.points.is_empty() && !self.force
    }

    /// Number of insertion points, the entry included.
    pub fn len(&self) -> usize {
        self.points.len() + usize::from(!self.entry.is_empty())
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
