//! The journal's async API for turns' process groups (`turn_processes`).

use crate::error::Result;
use crate::queries::processes;
use crate::{Journal, ProcessRow};

impl Journal {
    /// Records a running turn's process group (durable when this returns); its id.
    pub async fn record_process(&self, row: ProcessRow) -> Result<i64> {
        self.call(move |c| processes::insert(c, &row)).await
    }

    /// Forgets a process group once its process has ended.
    pub async fn process_ended(&self, process_id: i64) -> Result<()> {
        self.call(move |c| processes::delete(c, process_id)).await
    }

    /// The groups recorded and not forgotten: at start-up, those a previous Sextant left.
    pub async fn recorded_processes(&self) -> Result<Vec<ProcessRow>> {
        self.read(processes::list).await
    }
}
