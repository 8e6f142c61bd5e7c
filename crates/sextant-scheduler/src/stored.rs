//! What a stored schedule row says, read back: its creator, the assistant that made it, and its
//! timing. The operations (`service`), the views (`view`), the loop (`runner`) and backfills
//! all read rows through these; they use none of those modules, so none of them needs another
//! just to read a row.

use sextant_core::Principal;
use sextant_journal::ScheduleRow;

use crate::cron::FieldError;
use crate::timing::Timing;
use crate::{Error, Result};

/// A stored field that does not read back: the journal holds something it never wrote.
fn corrupt(row: &ScheduleRow, what: &str, e: impl std::fmt::Display) -> Error {
    Error::Journal(sextant_journal::Error::Corrupt(format!(
        "schedule {}: {what}: {e}",
        row.schedule_id
    )))
}

/// The creator stored with a schedule.
pub(crate) fn creator_of(row: &ScheduleRow) -> Result<Principal> {
    serde_json::from_str(&row.creator_principal).map_err(|e| corrupt(row, "creator", e))
}

/// The assistant that made a schedule for its owner, if one did.
pub(crate) fn assistant_of(row: &ScheduleRow) -> Result<Option<Principal>> {
    row.source_principal
        .as_deref()
        .map(|j| serde_json::from_str(j).map_err(|e| corrupt(row, "source", e)))
        .transpose()
}

/// The timing of a stored schedule.
pub(crate) fn timing_of(row: &ScheduleRow) -> Result<Timing, FieldError> {
    Timing::of(&row.cron, row.once_at.as_deref(), &row.timezone)
}
