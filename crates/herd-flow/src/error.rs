//! Errors of a graph ([`FlowError`]) and of a step ([`StepError`], [`Missing`]).

use std::fmt;

/// A prescribed step that can never run: the items it waits for were never put.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blocked {
    /// Name of the step collection.
    pub step_collection: String,
    /// The step's tag, `Debug`-formatted.
    pub tag: String,
    /// `(item collection, key)` of each item the step waits for, keys `Debug`-formatted.
    pub missing: Vec<(String, String)>,
}

impl fmt::Display for Blocked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}({}) waits for", self.step_collection, self.tag)?;
        for (i, (c, k)) in self.missing.iter().enumerate() {
            write!(f, "{} {c}[{k}]", if i == 0 { "" } else { "," })?;
        }
        Ok(())
    }
}

fn list(blocked: &[Blocked]) -> String {
    blocked.iter().map(|b| b.to_string()).collect::<Vec<_>>().join("; ")
}

/// What can go wrong in a graph.
#[derive(Debug, thiserror::Error)]
pub enum FlowError {
    /// A second `put` of the same key into an item collection (items are single-assignment).
    #[error("item collection `{collection}`: key {key} was put twice (items are single-assignment)")]
    DoublePut {
        /// Name of the item collection.
        collection: String,
        /// The key, `Debug`-formatted.
        key: String,
    },
    /// A `get` of an item that was already freed after its last declared get (get-count).
    #[error("item collection `{collection}`: key {key} was got after its get-count was exhausted")]
    Freed {
        /// Name of the item collection.
        collection: String,
        /// The key, `Debug`-formatted.
        key: String,
    },
    /// The graph is quiescent but prescribed steps can never run.
    #[error("graph quiescent with {} step(s) that can never run: {}", .0.len(), list(.0))]
    Unsatisfied(Vec<Blocked>),
    /// A step returned an error; the graph was stopped.
    #[error("step {collection}({tag}) failed: {error}")]
    Step {
        /// Name of the step collection.
        collection: String,
        /// The step's tag, `Debug`-formatted.
        tag: String,
        /// The step's error, formatted.
        error: String,
    },
    /// A step panicked; the graph was stopped.
    #[error("step {collection}({tag}) panicked: {message}")]
    Panic {
        /// Name of the step collection.
        collection: String,
        /// The step's tag, `Debug`-formatted.
        tag: String,
        /// The panic message (when it was a string).
        message: String,
    },
    /// Writing the timeline failed.
    #[error("cannot write the timeline: {0}")]
    Io(#[from] std::io::Error),
}

/// A `get` found the item absent: the step is suspended and re-run when the item is put.
///
/// Returned by [`Ctx::get`](crate::Ctx::get); propagate it with `?` (it converts into
/// [`StepError`]). A step that swallows it is still treated as suspended: its puts are discarded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Missing {
    /// Name of the item collection.
    pub collection: String,
    /// The key, `Debug`-formatted.
    pub key: String,
}

/// The error type of a step: a suspension ([`Missing`]) or a failure.
///
/// Any `std::error::Error` converts into it with `?`, and so does [`Missing`]. A
/// [`FlowError`] returned by a step (such as [`FlowError::DoublePut`] from
/// [`Ctx::put`](crate::Ctx::put)) is returned as itself by [`Graph::wait`](crate::Graph::wait).
pub enum StepError {
    /// The step got an absent item and will be re-run when it appears.
    Missing(Missing),
    /// The step failed; this stops the graph.
    Failed(Box<dyn std::error::Error + Send + Sync>),
}

impl StepError {
    /// A failure with a plain message.
    pub fn msg(message: impl fmt::Display) -> Self {
        StepError::Failed(Box::new(Message(message.to_string())))
    }
}

impl fmt::Debug for StepError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StepError::Missing(m) => write!(f, "Missing({}[{}])", m.collection, m.key),
            StepError::Failed(e) => write!(f, "Failed({e})"),
        }
    }
}

impl From<Missing> for StepError {
    fn from(m: Missing) -> Self {
        StepError::Missing(m)
    }
}

impl<E: std::error::Error + Send + Sync + 'static> From<E> for StepError {
    fn from(e: E) -> Self {
        StepError::Failed(Box::new(e))
    }
}

#[derive(Debug)]
struct Message(String);

impl fmt::Display for Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Message {}
