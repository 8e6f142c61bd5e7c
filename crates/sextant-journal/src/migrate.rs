//! Embedded, timestamped migrations applied on `PRAGMA user_version`.
//!
//! `user_version` counts applied migrations. Each migration and its bookkeeping run in one
//! IMMEDIATE transaction, so a crash leaves either the old or the new schema, never half.
//! (No migration crate supports rusqlite 0.43; see shared/reference/dependencies.md §3.)

use rusqlite::{Connection, TransactionBehavior};

use crate::error::{Error, Result};

/// `(name, sql)`, in order. Append only: never edit or reorder a released migration.
pub const MIGRATIONS: &[(&str, &str)] = &[
    (
        "20261129000000_init",
        include_str!("../migrations/20261129000000_init.sql"),
    ),
    (
        "20261129100000_interactions",
        include_str!("../migrations/20261129100000_interactions.sql"),
    ),
    (
        "20261129200000_schedules",
        include_str!("../migrations/20261129200000_schedules.sql"),
    ),
    (
        "20261130000000_security",
        include_str!("../migrations/20261130000000_security.sql"),
    ),
    (
        "20261130100000_peers",
        include_str!("../migrations/20261130100000_peers.sql"),
    ),
    (
        "20261130200000_live_tasks",
        include_str!("../migrations/20261130200000_live_tasks.sql"),
    ),
    (
        "20261130220000_task_events_in_session",
        include_str!("../migrations/20261130220000_task_events_in_session.sql"),
    ),
    (
        "20261130230000_session_tasks_by_events",
        include_str!("../migrations/20261130230000_session_tasks_by_events.sql"),
    ),
    (
        "20261130233000_live_tasks_by_comparisons",
        include_str!("../migrations/20261130233000_live_tasks_by_comparisons.sql"),
    ),
    (
        "20261201090000_peer_paused",
        include_str!("../migrations/20261201090000_peer_paused.sql"),
    ),
    (
        "20261201230000_task_outcome",
        include_str!("../migrations/20261201230000_task_outcome.sql"),
    ),
    (
        "20261201233000_task_search",
        include_str!("../migrations/20261201233000_task_search.sql"),
    ),
    (
        "20261202001000_turn_processes",
        include_str!("../migrations/20261202001000_turn_processes.sql"),
    ),
    (
        "20261202090000_schedule_policies",
        include_str!("../migrations/20261202090000_schedule_policies.sql"),
    ),
    (
        "20261202100000_push",
        include_str!("../migrations/20261202100000_push.sql"),
    ),
    (
        "20261202110000_peer_card_keys",
        include_str!("../migrations/20261202110000_peer_card_keys.sql"),
    ),
    (
        "20261202120000_assistant_peers",
        include_str!("../migrations/20261202120000_assistant_peers.sql"),
    ),
    (
        "20261202130000_peer_hop_limit",
        include_str!("../migrations/20261202130000_peer_hop_limit.sql"),
    ),
    (
        "20261202140000_schedule_grants",
        include_str!("../migrations/20261202140000_schedule_grants.sql"),
    ),
    (
        "20261202150000_task_tally",
        include_str!("../migrations/20261202150000_task_tally.sql"),
    ),
    (
        "20261202160000_caller_kind_spelling",
        include_str!("../migrations/20261202160000_caller_kind_spelling.sql"),
    ),
    (
        "20261202170000_retention",
        include_str!("../migrations/20261202170000_retention.sql"),
    ),
    (
        "20261203090000_task_text_pending",
        include_str!("../migrations/20261203090000_task_text_pending.sql"),
    ),
    (
        "20261203100000_task_content_hash_once",
        include_str!("../migrations/20261203100000_task_content_hash_once.sql"),
    ),
    (
        "20261203200000_tasks_ended",
        include_str!("../migrations/20261203200000_tasks_ended.sql"),
    ),
    (
        "20261208000000_schedule_editors",
        include_str!("../migrations/20261208000000_schedule_editors.sql"),
    ),
];

/// Applies the pending migrations; returns how many ran.
pub fn migrate(conn: &mut Connection) -> Result<usize> {
    let mut applied = 0;
    loop {
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let current = tx.pragma_query_value(None, "user_version", |r| r.get::<_, i64>(0))? as usize;
        if current > MIGRATIONS.len() {
            return Err(Error::TooNew {
                found: current,
                known: MIGRATIONS.len(),
            });
        }
        let Some((name, sql)) = MIGRATIONS.get(current) else {
            return Ok(applied);
        };
        tx.execute_batch(sql)?;
        tx.pragma_update(None, "user_version", (current + 1) as i64)?;
        tx.commit()?;
        tracing::info!(migration = name, "applied journal migration");
        applied += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrations_apply_once_to_an_empty_database() {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = Connection::open(dir.path().join("j.db")).unwrap();
        assert_eq!(migrate(&mut conn).unwrap(), MIGRATIONS.len());
        assert_eq!(migrate(&mut conn).unwrap(), 0);
        let v: i64 = conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .unwrap();
        assert_eq!(v as usize, MIGRATIONS.len());
    }

    #[test]
    fn a_newer_database_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = Connection::open(dir.path().join("j.db")).unwrap();
        conn.pragma_update(None, "user_version", 99).unwrap();
        assert!(matches!(
            migrate(&mut conn),
            Err(Error::TooNew { found: 99, .. })
        ));
    }
}
