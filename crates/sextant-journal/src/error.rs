//! Journal errors: what callers branch on, not every upstream error.

/// A journal failure.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The row asked for does not exist.
    #[error("not found")]
    NotFound,
    /// The write contradicts what is stored (e.g. a state change after a terminal state).
    #[error("conflict: {0}")]
    Conflict(String),
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
