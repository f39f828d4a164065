//! The one error type of the rewriter: what went wrong, at which byte offset, and in which class and method.

use std::fmt;

/// A rewriter error. Boxed so that `Result<T>` stays one word on the happy path.
#[derive(Clone, PartialEq, Eq)]
pub struct Error(Box<ErrorInner>);

#[derive(Clone, PartialEq, Eq, Debug)]
struct ErrorInner {
    message: String,
    offset: Option<usize>,
    /// Outermost last: method, then class, as the error travels up.
    context: Vec<String>,
    kind: ErrorKind,
}

/// What the caller may want to do differently depending on the failure.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ErrorKind {
    /// The bytes are not a well-formed class file.
    Malformed,
    /// The class is well-formed but the edit cannot be made (for example the method would exceed 64 KB).
    Unsupported,
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    #[cold]
    pub fn malformed(offset: usize, message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Malformed, Some(offset), message.into())
    }

    #[cold]
    pub fn unsupported(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Unsupported, None, message.into())
    }

    fn new(kind: ErrorKind, offset: Option<usize>, message: String) -> Self {
        Error(Box::new(ErrorInner {
            message,
            offset,
            context: Vec::new(),
            kind,
        }))
    }

    /// Adds where the error happened, for example `method foo(I)V` or `class com/foo/Bar`.
    #[cold]
    pub fn within(mut self, what: impl Into<String>) -> Self {
        self.0.context.push(what.into());
        self
    }

    pub fn kind(&self) -> ErrorKind {
        self.0.kind
    }

    pub fn offset(&self) -> Option<usize> {
        self.0.offset
    }

    pub fn message(&self) -> &str {
        &self.0.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.message)?;
        if let Some(offset) = self.0.offset {
            write!(f, " at offset {offset:#x}")?;
        }
        for place in &self.0.context {
            write!(f, " in {place}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl std::error::Error for Error {}

/// Returns early with a [`Error::malformed`] error.
macro_rules! bail {
    ($offset:expr, $($arg:tt)*) => {
        return Err($crate::error::Error::malformed($offset, format!($($arg)*)))
    };
}
pub(crate) use bail;
