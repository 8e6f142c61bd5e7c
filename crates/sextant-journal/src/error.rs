//! Journal errors: what callers branch on, not every upstream error.

/// A journal failure.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The row asked for does not exist.
    #[error("not found")]
    NotFound,
    /// The write contradicts what is stored (a state change after a terminal state, a Run or
    /// a name that exists already, a decision answered meanwhile). Nothing was written.
    #[error("conflict: {0}")]
    Conflict(String),
    /// A journal thread could not be started (the writer, a reader, the WAL sync thread).
    #[error("cannot start the journal's {what} thread: {source}")]
    Spawn {
        what: &'static str,
        #[source]
        source: std::io::Error,
    },
    /// The writer could not commit, or could not take the write: nothing of it was recorded.
    /// Unlike a [`Error::Conflict`], retrying the same write later may succeed.
    #[error("journal unavailable: {0}")]
    Unavailable(String),
    /// Journal work was lost: it panicked, or a task or thread running it went away.
    #[error("journal work failed: {0}")]
    Failed(String),
    /// A file the journal writes beside the database (an export, a snapshot, a retention
    /// export) could not be written or used.
    #[error("{0}")]
    File(String),
    /// The database file is older than this binary and must be migrated first.
    #[error(
        "the journal has schema version {found} and this Sextant needs version {known}: start \
         Sextant on it once (it migrates the journal), then try again"
    )]
    TooOld { found: usize, known: usize },
    /// The database file is newer than this binary.
    #[error("database schema version {found} is newer than this Sextant (knows {known})")]
    TooNew { found: usize, known: usize },
    /// A stored row could not be decoded.
    #[error("corrupt journal row: {0}")]
    Corrupt(String),
    /// The writer thread has stopped (shutdown).
    #[error("journal is closed")]
    Closed,
    #[error(transparent)]
    Db(#[from] rusqlite::Error),
}

/// Journal result.
pub type Result<T, E = Error> = std::result::Result<T, E>;
