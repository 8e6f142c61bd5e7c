//! When a schedule fires: a cron expression ([`CronSpec`]) or one local time (a one-shot
//! plan), in the schedule's zone, plus the deterministic jitter of each slot. Pure.

use chrono::{DateTime, Duration, NaiveDateTime, Utc};
use chrono_tz::Tz;
use sha2::{Digest, Sha256};

use crate::cron::{CronSpec, FieldError, MIN_INTERVAL_SECS, parse_timezone, resolve_local};

/// The largest jitter a schedule may have.
pub const MAX_JITTER_SECS: i64 = 3600;

/// How many fires [`Timing::validate_cron`] looks at to check the shortest interval.
const CHECKED_FIRES: usize = 8;

/// The local-time format of a one-shot plan as stored and shown (`once_at`).
pub const ONCE_FORMAT: &str = "%Y-%m-%dT%H:%M:%S";

/// A schedule's timing.
#[derive(Debug, Clone)]
pub enum Timing {
    /// A cron expression (boxed: croner's parsed pattern is large).
    Cron(Box<CronSpec>),
    /// One Run, at a local wall-clock time.
    Once {
        /// The local time asked for.
        local: NaiveDateTime,
        /// The instant it stands for (see [`resolve_local`]: a repeated time is its first
        /// occurrence, a time in a gap is the gap's end).
        at: DateTime<Utc>,
        tz: Tz,
    },
}

/// Parses a one-shot local time: `YYYY-MM-DDTHH:MM[:SS]` (a space works for the `T`), no
/// offset: it is a wall-clock time in the schedule's zone.
pub fn parse_local(s: &str) -> Result<NaiveDateTime, FieldError> {
    let s = s.trim();
    [
        "%Y-%m-%dT%H:%M:%S",
        "%Y-%m-%dT%H:%M",
        "%Y-%m-%d %H:%M:%S",
        "%Y-%m-%d %H:%M",
    ]
    .iter()
    .find_map(|f| NaiveDateTime::parse_from_str(s, f).ok())
    .ok_or_else(|| {
        FieldError::new(
            "once_at",
            format!(
                "{s:?} is not a local date and time; use YYYY-MM-DDTHH:MM, e.g. \
                     \"2026-12-24T09:00\" (a wall-clock time in the schedule's timezone, \
                     without an offset)"
            ),
        )
    })
}

impl Timing {
    /// The timing of a stored schedule (`cron` is empty for a one-shot plan).
    pub fn of(cron: &str, once_at: Option<&str>, timezone: &str) -> Result<Self, FieldError> {
        match once_at {
            Some(local) => Self::once(local, timezone),
            None => CronSpec::parse(cron, timezone).map(|c| Timing::Cron(Box::new(c))),
        }
    }

    /// A one-shot timing, without checking that it is in the future.
    pub fn once(local: &str, timezone: &str) -> Result<Self, FieldError> {
        let tz = parse_timezone(timezone)?;
        let local = parse_local(local)?;
        let at = resolve_local(tz, local)
            .ok_or_else(|| FieldError::new("once_at", format!("{local} does not exist in {tz}")))?;
        Ok(Timing::Once { local, at, tz })
    }

    /// A cron timing that fires after `now`, never more often than once a minute.
    pub fn validate_cron(
        expr: &str,
        timezone: &str,
        now: DateTime<Utc>,
    ) -> Result<Self, FieldError> {
        CronSpec::validate(expr, timezone, now).map(|c| Timing::Cron(Box::new(c)))
    }

    /// A one-shot timing after `now`.
    pub fn validate_once(
        local: &str,
        timezone: &str,
        now: DateTime<Utc>,
    ) -> Result<Self, FieldError> {
        let t = Self::once(local, timezone)?;
        if let Timing::Once { at, tz, .. } = &t
            && *at <= now
        {
            return Err(FieldError::new(
                "once_at",
                format!(
                    "{} is in the past (it is now {} in {tz})",
                    at.with_timezone(tz).format("%Y-%m-%d %H:%M:%S %Z"),
                    now.with_timezone(tz).format("%Y-%m-%d %H:%M:%S %Z"),
                ),
            ));
        }
        Ok(t)
    }

    /// The time zone.
    pub fn timezone(&self) -> Tz {
        match self {
            Timing::Cron(c) => c.timezone(),
            Timing::Once { tz, .. } => *tz,
        }
    }

    /// Whether this is a one-shot plan.
    pub fn is_once(&self) -> bool {
        matches!(self, Timing::Once { .. })
    }

    /// The first slot strictly after `t`.
    pub fn next_after(&self, t: DateTime<Utc>) -> Option<DateTime<Utc>> {
        match self {
            Timing::Cron(c) => c.next_after(t),
            Timing::Once { at, .. } => (*at > t).then_some(*at),
        }
    }

    /// The next `n` slots strictly after `t`, in the schedule's zone.
    pub fn upcoming(&self, t: DateTime<Utc>, n: usize) -> Vec<DateTime<Tz>> {
        match self {
            Timing::Cron(c) => c.upcoming(t, n),
            Timing::Once { at, tz, .. } => (*at > t && n > 0)
                .then(|| at.with_timezone(tz))
                .into_iter()
                .collect(),
        }
    }

    /// In plain words: croner's description of the expression, or "Once, on …".
    pub fn describe(&self) -> String {
        match self {
            Timing::Cron(c) => c.describe(),
            Timing::Once { at, tz, .. } => format!(
                "Once, on {} ({tz}).",
                at.with_timezone(tz).format("%A %-d %B %Y at %H:%M:%S %Z")
            )
            .replace(":00 ", " "),
        }
    }

    /// Checks a jitter for this timing: at most [`MAX_JITTER_SECS`], and shorter than the
    /// shortest interval between its next fires (so slots keep their order).
    pub fn check_jitter(&self, jitter_secs: i64, now: DateTime<Utc>) -> Result<i64, FieldError> {
        if !(0..=MAX_JITTER_SECS).contains(&jitter_secs) {
            return Err(FieldError::new(
                "jitter_secs",
                format!("must be between 0 and {MAX_JITTER_SECS} seconds"),
            ));
        }
        if jitter_secs > 0
            && let Timing::Cron(c) = self
        {
            let fires = c.upcoming(now, CHECKED_FIRES);
            let shortest = fires
                .windows(2)
                .map(|w| (w[1] - w[0]).num_seconds())
                .min()
                .unwrap_or(i64::MAX)
                .max(MIN_INTERVAL_SECS);
            if jitter_secs >= shortest {
                return Err(FieldError::new(
                    "jitter_secs",
                    format!(
                        "{jitter_secs} s is not shorter than the shortest interval between \
                         this schedule's fires ({shortest} s); Runs would change order"
                    ),
                ));
            }
        }
        Ok(jitter_secs)
    }
}

/// The jitter of one slot of one schedule: a number of seconds in `0..=max`, the same every
/// time it is asked for (the first 8 bytes of SHA-256 over the schedule id and the slot), so
/// every process and every restart fires a slot at the same instant.
pub fn jitter(schedule_id: &str, slot: DateTime<Utc>, max: i64) -> Duration {
    if max <= 0 {
        return Duration::zero();
    }
    let digest = Sha256::new()
        .chain_update(schedule_id.as_bytes())
        .chain_update([0])
        .chain_update(slot.timestamp().to_be_bytes())
        .finalize();
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    let n = u64::from_be_bytes(first) % (max as u64 + 1);
    Duration::seconds(n as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utc(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().to_utc()
    }

    #[test]
    fn one_shot_plans_fire_once_at_their_local_time() {
        let t = Timing::once("2026-12-24T09:00", "Europe/Paris").unwrap();
        let at = utc("2026-12-24T08:00:00Z");
        assert_eq!(t.next_after(utc("2026-12-01T00:00:00Z")), Some(at));
        assert_eq!(t.next_after(at), None);
        assert_eq!(t.upcoming(utc("2026-12-01T00:00:00Z"), 5).len(), 1);
        assert_eq!(
            t.describe(),
            "Once, on Thursday 24 December 2026 at 09:00 CET (Europe/Paris)."
        );
        // A repeated local time is its first occurrence; a time in a gap, the gap's end.
        let t = Timing::once("2027-11-07 01:30", "America/New_York").unwrap();
        assert_eq!(
            t.next_after(utc("2027-01-01T00:00:00Z")),
            Some(utc("2027-11-07T05:30:00Z"))
        );
        let t = Timing::once("2027-03-28T02:30:00", "Europe/Berlin").unwrap();
        assert_eq!(
            t.next_after(utc("2027-01-01T00:00:00Z")),
            Some(utc("2027-03-28T01:00:00Z"))
        );
        // In the past, or not a local time: the field says so.
        let now = utc("2026-12-25T00:00:00Z");
        let e = Timing::validate_once("2026-12-24T09:00", "Europe/Paris", now).unwrap_err();
        assert_eq!(e.field, "once_at");
        assert!(e.message.contains("in the past"), "{e}");
        for bad in [
            "tomorrow",
            "2026-12-24",
            "2026-12-24T09:00+01:00",
            "2026-13-01T00:00",
        ] {
            assert_eq!(
                Timing::once(bad, "UTC").unwrap_err().field,
                "once_at",
                "{bad}"
            );
        }
    }

    #[test]
    fn jitter_is_bounded_and_the_same_for_a_slot() {
        let slot = utc("2026-12-01T09:00:00Z");
        let j = jitter("s1", slot, 300);
        assert!(j >= Duration::zero() && j <= Duration::seconds(300), "{j}");
        assert_eq!(j, jitter("s1", slot, 300));
        assert_eq!(jitter("s1", slot, 0), Duration::zero());
        // Spread: across a day of minutes, slots land all over the window.
        let mut seen = std::collections::HashSet::new();
        for m in 0..1440 {
            let d = jitter("s1", slot + Duration::minutes(m), 59).num_seconds();
            assert!((0..=59).contains(&d));
            seen.insert(d);
        }
        assert!(seen.len() > 50, "{}", seen.len());
        // Another schedule, another offset for the same slot (almost always).
        let other: Vec<i64> = (0..20)
            .map(|i| jitter(&format!("s{i}"), slot, 3600).num_seconds())
            .collect();
        assert!(other.iter().collect::<std::collections::HashSet<_>>().len() > 15);
    }

    #[test]
    fn jitter_must_be_shorter_than_the_interval() {
        let now = utc("2026-12-01T00:00:00Z");
        let every_five = Timing::validate_cron("*/5 * * * *", "UTC", now).unwrap();
        assert_eq!(every_five.check_jitter(299, now), Ok(299));
        let e = every_five.check_jitter(300, now).unwrap_err();
        assert_eq!(e.field, "jitter_secs");
        assert!(every_five.check_jitter(-1, now).is_err());
        let daily = Timing::validate_cron("0 9 * * *", "UTC", now).unwrap();
        assert_eq!(daily.check_jitter(3600, now), Ok(3600));
        assert!(daily.check_jitter(3601, now).is_err());
    }
}
