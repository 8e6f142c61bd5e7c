//! Embedded, timestamped migrations applied on `PRAGMA user_version`.
//!
//! `user_version` counts applied migrations. Each migration and its bookkeeping run in one
//! IMMEDIATE transaction, so a crash leaves either the old or the new schema, never half.
//!
//! A migration whose first line is [`FOREIGN_KEYS_OFF`] rebuilds a table that others reference:
//! it runs with foreign keys off (SQLite's procedure for changing a table it cannot ALTER;
//! the pragma does nothing inside a transaction, so it is set around it), and every foreign key
//! is checked before its transaction commits.
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
        "20261130235000_sessions_tasks_without_rowid",
        include_str!("../migrations/20261130235000_sessions_tasks_without_rowid.sql"),
    ),
];

/// The first line of a migration that must run with foreign keys off.
pub const FOREIGN_KEYS_OFF: &str = "-- sextant: foreign_keys off";

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
        let keys_off = sql.starts_with(FOREIGN_KEYS_OFF);
        if keys_off {
            // Not in a transaction, or the pragma is ignored: this one holds no write yet.
            drop(tx);
            let was: bool = conn.pragma_query_value(None, "foreign_keys", |r| r.get(0))?;
            conn.pragma_update(None, "foreign_keys", false)?;
            let done = apply_checked(conn, current, sql);
            conn.pragma_update(None, "foreign_keys", was)?;
            done?;
        } else {
            tx.execute_batch(sql)?;
            tx.pragma_update(None, "user_version", (current + 1) as i64)?;
            tx.commit()?;
        }
        tracing::info!(migration = name, "applied journal migration");
        applied += 1;
    }
}

/// Runs migration number `current` (foreign keys off) and commits it only if every foreign key
/// still holds.
fn apply_checked(conn: &mut Connection, current: usize, sql: &str) -> Result<()> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    // Another process may have applied it meanwhile.
    let now = tx.pragma_query_value(None, "user_version", |r| r.get::<_, i64>(0))? as usize;
    if now != current {
        return Ok(());
    }
    tx.execute_batch(sql)?;
    let broken: i64 = tx.query_row("SELECT count(*) FROM pragma_foreign_key_check", [], |r| {
        r.get(0)
    })?;
    if broken > 0 {
        return Err(Error::Corrupt(format!(
            "migration {current} would leave {broken} rows with a broken foreign key; not applied"
        )));
    }
    tx.pragma_update(None, "user_version", (current + 1) as i64)?;
    tx.commit()?;
    Ok(())
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

    /// Applies the migrations before `name` to a new database.
    fn migrated_before(path: &std::path::Path, name: &str) -> (Connection, usize) {
        let c = Connection::open(path).unwrap();
        let before = MIGRATIONS.iter().position(|(n, _)| *n == name).unwrap();
        for (_, sql) in &MIGRATIONS[..before] {
            c.execute_batch(sql).unwrap();
        }
        c.pragma_update(None, "user_version", before as i64)
            .unwrap();
        (c, before)
    }

    fn rows(c: &Connection, sql: &str) -> Vec<Vec<rusqlite::types::Value>> {
        let mut st = c.prepare(sql).unwrap();
        let n = st.column_count();
        st.query_map([], |r| (0..n).map(|i| r.get(i)).collect())
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap()
    }

    fn schema_of(c: &Connection, name: &str) -> String {
        c.query_row(
            "SELECT sql FROM sqlite_master WHERE name = ?1",
            [name],
            |r| r.get(0),
        )
        .unwrap()
    }

    const REBUILD: &str = "20261130235000_sessions_tasks_without_rowid";

    const SAMPLE: &str = "
        INSERT INTO agents VALUES ('echo', 'Echo', '', 'echo', '{}', 't', 't');
        INSERT INTO sessions VALUES ('s1', 'echo', 'alice', 'person', 'cx', 'a2a', 't1', 't3', 3);
        INSERT INTO sessions VALUES ('s2', 'echo', 'bob', 'peer', 'cy', 'outbound', 't2', 't2', 1);
        INSERT INTO events VALUES ('s1', 1, 'a', 't1', 'task_created', '{}');
        INSERT INTO events VALUES ('s1', 2, 'a', 't2', 'turn_started', '{}');
        INSERT INTO events VALUES ('s1', 3, 'a', 't3', 'task_state', '{}');
        INSERT INTO events VALUES ('s2', 1, 'b', 't2', 'task_created', '{}');
        INSERT INTO tasks VALUES ('a', 's1', 'alice', 'echo', 'cx', 'm1', 'h1', 't1',
                                  'TASK_STATE_COMPLETED', 't3', 3, 1);
        INSERT INTO tasks VALUES ('b', 's2', 'bob', 'echo', 'cy', 'm2', 'h2', 't2',
                                  'TASK_STATE_SUBMITTED', 't2', 1, 1);
        INSERT INTO inputs VALUES ('alice', 'echo', 'm1', 'a', 'h1', 1);
        INSERT INTO interactions VALUES ('i', 'a', 's1', 'answered', 't2', 2, NULL, 3, '{}');";

    /// The rebuild keeps every row and index, drops the rowid B-trees, and leaves foreign keys
    /// enforced on the rebuilt tables.
    #[test]
    fn sessions_and_tasks_are_rebuilt_without_rowid() {
        let dir = tempfile::tempdir().unwrap();
        let (mut c, before) = migrated_before(&dir.path().join("j.db"), REBUILD);
        c.pragma_update(None, "foreign_keys", true).unwrap();
        c.execute_batch(SAMPLE).unwrap();
        let tables = ["sessions", "tasks", "events", "inputs", "interactions"];
        let snapshot = |c: &Connection| -> Vec<_> {
            tables
                .iter()
                .map(|t| rows(c, &format!("SELECT * FROM {t} ORDER BY 1, 2")))
                .collect()
        };
        let old = snapshot(&c);

        assert_eq!(migrate(&mut c).unwrap(), MIGRATIONS.len() - before);

        assert_eq!(snapshot(&c), old);
        for table in ["sessions", "tasks"] {
            assert!(schema_of(&c, table).ends_with("WITHOUT ROWID"), "{table}");
        }
        let indexes: Vec<String> = rows(
            &c,
            "SELECT name FROM sqlite_master WHERE type = 'index'
               AND tbl_name IN ('sessions', 'tasks') ORDER BY name",
        )
        .into_iter()
        .map(|r| match &r[0] {
            rusqlite::types::Value::Text(s) => s.clone(),
            other => panic!("{other:?}"),
        })
        .collect();
        assert_eq!(
            indexes,
            [
                "sessions_outbound",
                "sessions_updated",
                "sqlite_autoindex_sessions_2",
                "tasks_by_caller",
                "tasks_live",
            ]
        );
        let keys_on: bool = c
            .pragma_query_value(None, "foreign_keys", |r| r.get(0))
            .unwrap();
        assert!(keys_on);
        let orphan = c.execute(
            "INSERT INTO tasks VALUES ('c', 'nowhere', 'alice', 'echo', 'cz', 'm3', 'h3', 't',
                                       'TASK_STATE_SUBMITTED', 't', 1, 1)",
            [],
        );
        assert!(orphan.is_err(), "a task of no Session was accepted");
        let missing = c.execute("DELETE FROM sessions WHERE session_id = 's1'", []);
        assert!(missing.is_err(), "a Session with tasks was deleted");
    }

    /// A rebuild that finds a broken reference commits nothing.
    #[test]
    fn a_rebuild_over_a_broken_reference_is_not_applied() {
        let dir = tempfile::tempdir().unwrap();
        let (mut c, before) = migrated_before(&dir.path().join("j.db"), REBUILD);
        c.execute_batch(SAMPLE).unwrap();
        c.pragma_update(None, "foreign_keys", false).unwrap();
        c.execute_batch(
            "INSERT INTO tasks VALUES ('c', 'nowhere', 'alice', 'echo', 'cz', 'm3', 'h3', 't',
                                      'TASK_STATE_SUBMITTED', 't', 1, 1);",
        )
        .unwrap();

        let err = migrate(&mut c).unwrap_err();
        assert!(err.to_string().contains("broken foreign key"), "{err}");
        let version: i64 = c
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .unwrap();
        assert_eq!(version as usize, before);
        assert!(!schema_of(&c, "tasks").contains("WITHOUT ROWID"));
        assert_eq!(rows(&c, "SELECT * FROM tasks").len(), 3);
    }
}
