//! Wall time behind a trait. Everything that decides on "now" (task timestamps, expiries, cron)
//! takes a [`Clock`] so tests can set the time instead of sleeping.

use std::sync::{Arc, Mutex};

use chrono::{DateTime, Utc};

/// A source of wall-clock time.
pub trait Clock: Send + Sync + 'static {
    /// The current time.
    fn now(&self) -> DateTime<Utc>;
}

/// The real clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

/// A clock that only moves when told to. Clones share the same time.
#[derive(Debug, Clone)]
pub struct ManualClock {
    now: Arc<Mutex<DateTime<Utc>>>,
}

impl ManualClock {
    /// A clock stopped at `start`.
    pub fn new(start: DateTime<Utc>) -> Self {
        Self {
            now: Arc::new(Mutex::new(start)),
        }
    }

    /// Moves the clock to `t` (which may be earlier: a machine clock can jump back).
    pub fn set(&self, t: DateTime<Utc>) {
        *self.now.lock().unwrap_or_else(|e| e.into_inner()) = t;
    }

    /// Moves the clock forward by `d`.
    pub fn advance(&self, d: chrono::Duration) {
        let mut now = self.now.lock().unwrap_or_else(|e| e.into_inner());
        *now += d;
    }
}

impl Clock for ManualClock {
    fn now(&self) -> DateTime<Utc> {
        *self.now.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manual_clock_clones_share_time() {
        let start = DateTime::parse_from_rfc3339("2026-01-01T00:00:00Z")
            .unwrap()
            .to_utc();
        let a = ManualClock::new(start);
        let b = a.clone();
        a.advance(chrono::Duration::minutes(5));
        assert_eq!(b.now(), start + chrono::Duration::minutes(5));
    }
}
