//! What to do with a schedule whose cursor (`next_fire_at`) is due: the missed-run policy.
//! Pure: the caller passes "now" from its `Clock`.
//!
//! The rules:
//! - Every due slot is visited in order from the cursor (croner's forward walk, so the DST
//!   rules of [`crate::cron`] hold), but at most one Run comes out of one visit: the latest due
//!   slot. Older due slots are never run; a schedule does not pile up Runs after a sleep.
//! - A slot is due once its time plus its jitter ([`crate::timing::jitter`]) has come;
//!   lateness is counted from then.
//! - The latest due slot is **on time** if it is at most [`ON_TIME_SECS`] late: it fires. If
//!   slots before it were missed (the machine woke just in time for the next one), the latest
//!   of those is recorded as a `missed` Run too, so the gap shows in the history.
//! - Otherwise it was **missed** (the machine slept, Sextant was closed). With `skip` it is
//!   recorded as a `missed` Run and not run. With `run_once` it fires late (a `catchup` Run)
//!   if it is at most the schedule's catch-up window (`missed_run_grace_secs`) late, else it
//!   is recorded as `missed`.
//! - The cursor then moves to the first slot after now.
//!
//! The same rules apply at start-up and after a wake-up: the loop cannot tell them apart, and
//! does not need to.

use chrono::{DateTime, Duration, Utc};
use sextant_core::MissedRunPolicy;
use sextant_core::ids::format_time;

use crate::timing::Timing;

/// A slot handled at most this long after it was due counts as on time.
pub const ON_TIME_SECS: i64 = 60;
/// The default grace window of `run_once`.
pub const DEFAULT_GRACE_SECS: i64 = 3600;
/// The allowed grace windows: one minute to seven days.
pub const GRACE_RANGE_SECS: std::ops::RangeInclusive<i64> = 60..=7 * 24 * 3600;

/// How far back from now the walk starts when the cursor is older than that (so a schedule
/// asleep for months costs no more than a day's walk). At least a day and a bit, to cover a
/// DST shift, and at least the grace window, so `run_once` still finds its slot.
fn walk_window(grace: Duration) -> Duration {
    grace.max(Duration::hours(26))
}

/// The outcome for one due schedule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Run for `slot`. `note` is set when it runs late (under `run_once`): a catch-up Run.
    Fire {
        slot: DateTime<Utc>,
        note: Option<String>,
    },
    /// Record `slot` as missed, with the reason.
    Missed { slot: DateTime<Utc>, reason: String },
}

impl Decision {
    /// The slot the Run is for.
    pub fn slot(&self) -> DateTime<Utc> {
        match self {
            Decision::Fire { slot, .. } | Decision::Missed { slot, .. } => *slot,
        }
    }
}

/// What to do now, and where the cursor goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// `None` when nothing is due.
    pub decision: Option<Decision>,
    /// The latest missed slot before an on-time one (a [`Decision::Missed`]), recorded so the
    /// gap leaves a trace; `None` otherwise.
    pub missed_before: Option<Decision>,
    /// The new cursor: the first slot after now (`None` if the expression never fires again).
    pub next: Option<DateTime<Utc>>,
}

/// Plans one schedule whose cursor is `cursor`, at `now`; `jitter` is the delay of a slot.
pub fn plan(
    spec: &Timing,
    cursor: DateTime<Utc>,
    now: DateTime<Utc>,
    policy: MissedRunPolicy,
    grace: Duration,
    jitter: &dyn Fn(DateTime<Utc>) -> Duration,
) -> Plan {
    if cursor + jitter(cursor) > now {
        return Plan {
            decision: None,
            missed_before: None,
            next: Some(cursor),
        };
    }
    let window = walk_window(grace);
    let (mut slot, truncated) = if cursor < now - window {
        (spec.next_after(now - window), true)
    } else {
        (Some(cursor), false)
    };
    let mut latest = None;
    let mut before_latest = None;
    let mut due = 0u64;
    while let Some(s) = slot {
        if s + jitter(s) > now {
            break;
        }
        before_latest = latest;
        latest = Some(s);
        due += 1;
        slot = spec.next_after(s);
    }
    let next = slot;
    let Some(latest) = latest else {
        // The cursor is older than the window and nothing fell inside it: the cursor's own
        // slot is the one to report, and it is older than any grace window.
        return Plan {
            decision: Some(Decision::Missed {
                slot: cursor,
                reason: format!(
                    "missed: due at {} while Sextant was not running or the machine was \
                     asleep, {} ago",
                    format_time(cursor),
                    human(now - cursor)
                ),
            }),
            missed_before: None,
            next,
        };
    };
    let late = now - (latest + jitter(latest));
    let earlier = |n: u64| match (n, truncated) {
        (0, false) => String::new(),
        (n, false) => format!("; {n} earlier slot(s) were not run either"),
        (_, true) => "; earlier slots were not run either".to_string(),
    };
    if late <= Duration::seconds(ON_TIME_SECS) {
        // On time. A slot before it that was missed (or, after a long sleep, the walk's first
        // slot) is recorded, so the history shows the gap.
        let missed_before = before_latest
            .map(|m| (m, earlier(due.saturating_sub(2))))
            .or_else(|| truncated.then(|| (cursor, String::new())))
            .map(|(m, older)| Decision::Missed {
                slot: m,
                reason: format!(
                    "missed: due at {} while Sextant was not running or the machine was \
                     asleep; the next slot, {}, ran on time{older}",
                    format_time(m),
                    format_time(latest),
                ),
            });
        return Plan {
            decision: Some(Decision::Fire {
                slot: latest,
                note: None,
            }),
            missed_before,
            next,
        };
    }
    let earlier = earlier(due.saturating_sub(1));
    let when = format!(
        "due at {} while Sextant was not running or the machine was asleep, {} late",
        format_time(latest),
        human(late)
    );
    let decision = match policy {
        MissedRunPolicy::Skip => Decision::Missed {
            slot: latest,
            reason: format!("missed: {when}; policy skip{earlier}"),
        },
        MissedRunPolicy::RunOnce if late <= grace => Decision::Fire {
            slot: latest,
            note: Some(format!(
                "ran late: {when}; policy run_once, within the {} catch-up window{earlier}",
                human(grace)
            )),
        },
        MissedRunPolicy::RunOnce => Decision::Missed {
            slot: latest,
            reason: format!(
                "missed: {when}; policy run_once, but that is beyond the {} catch-up window{earlier}",
                human(grace)
            ),
        },
    };
    Plan {
        decision: Some(decision),
        missed_before: None,
        next,
    }
}

/// A duration for people: `45s`, `12m`, `3h 5m`, `2d 4h`.
pub fn human(d: Duration) -> String {
    let s = d.num_seconds().max(0);
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m", s / 60),
        3600..86400 => match (s % 3600) / 60 {
            0 => format!("{}h", s / 3600),
            m => format!("{}h {m}m", s / 3600),
        },
        _ => match (s % 86400) / 3600 {
            0 => format!("{}d", s / 86400),
            h => format!("{}d {h}h", s / 86400),
        },
    }
}

#[cfg(test)]
mod tests {
    use sextant_core::{Clock, ManualClock};

    use super::*;
    use crate::cron::CronSpec;

    fn none(_: DateTime<Utc>) -> Duration {
        Duration::zero()
    }

    fn cron(expr: &str, tz: &str) -> Timing {
        Timing::Cron(Box::new(CronSpec::parse(expr, tz).unwrap()))
    }

    fn utc(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().to_utc()
    }

    fn daily_0900() -> Timing {
        cron("0 9 * * *", "Europe/Berlin")
    }

    const HOUR: Duration = Duration::hours(1);

    #[test]
    fn nothing_is_due_before_the_cursor() {
        let spec = daily_0900();
        let cursor = utc("2026-12-01T08:00:00Z");
        let clock = ManualClock::new(utc("2026-12-01T07:59:59Z"));
        let p = plan(
            &spec,
            cursor,
            clock.now(),
            MissedRunPolicy::Skip,
            HOUR,
            &none,
        );
        assert_eq!(p.decision, None);
        assert_eq!(p.next, Some(cursor));
    }

    #[test]
    fn an_on_time_slot_fires_whatever_the_policy() {
        let spec = daily_0900();
        let cursor = utc("2026-12-01T08:00:00Z"); // 09:00 Berlin
        let clock = ManualClock::new(cursor);
        for policy in [MissedRunPolicy::Skip, MissedRunPolicy::RunOnce] {
            for lag in [0, 1, ON_TIME_SECS] {
                clock.set(cursor + Duration::seconds(lag));
                let p = plan(&spec, cursor, clock.now(), policy, HOUR, &none);
                assert_eq!(
                    p.decision,
                    Some(Decision::Fire {
                        slot: cursor,
                        note: None
                    }),
                    "{policy:?} lag {lag}"
                );
                assert_eq!(p.next, Some(utc("2026-12-02T08:00:00Z")));
            }
        }
    }

    #[test]
    fn a_missed_slot_before_an_on_time_one_is_recorded() {
        let spec = cron("0 * * * *", "UTC");
        let cursor = utc("2026-12-01T08:00:00Z");
        // Asleep from 07:59 to 10:00:20: 08:00 and 09:00 were missed, 10:00 is on time.
        let p = plan(
            &spec,
            cursor,
            utc("2026-12-01T10:00:20Z"),
            MissedRunPolicy::Skip,
            HOUR,
            &none,
        );
        assert_eq!(
            p.decision,
            Some(Decision::Fire {
                slot: utc("2026-12-01T10:00:00Z"),
                note: None
            })
        );
        let Some(Decision::Missed { slot, reason }) = p.missed_before else {
            panic!("expected a trace of the missed slot: {p:?}")
        };
        assert_eq!(slot, utc("2026-12-01T09:00:00Z"));
        assert!(reason.contains("ran on time"), "{reason}");
        assert!(reason.contains("1 earlier slot(s)"), "{reason}");
        assert_eq!(p.next, Some(utc("2026-12-01T11:00:00Z")));
        // Nothing missed: no trace.
        let p = plan(
            &spec,
            cursor,
            utc("2026-12-01T08:00:10Z"),
            MissedRunPolicy::Skip,
            HOUR,
            &none,
        );
        assert_eq!(p.missed_before, None);
        // Asleep for weeks, waking on time for an hourly slot: the walk's first slot (a day
        // back) is the trace, and older ones are counted.
        let p = plan(
            &spec,
            cursor,
            utc("2026-12-20T10:00:05Z"),
            MissedRunPolicy::RunOnce,
            HOUR,
            &none,
        );
        let Some(Decision::Missed { slot, reason }) = p.missed_before else {
            panic!("expected a trace: {p:?}")
        };
        assert_eq!(slot, utc("2026-12-20T09:00:00Z"));
        assert!(
            reason.contains("earlier slots were not run either"),
            "{reason}"
        );
    }

    #[test]
    fn skip_records_the_latest_missed_slot_and_runs_nothing() {
        let spec = daily_0900();
        let cursor = utc("2026-12-01T08:00:00Z");
        // The machine slept a day; it wakes at 10:00 Berlin on the 2nd.
        let clock = ManualClock::new(cursor);
        clock.advance(Duration::hours(25));
        let p = plan(
            &spec,
            cursor,
            clock.now(),
            MissedRunPolicy::Skip,
            HOUR,
            &none,
        );
        let Some(Decision::Missed { slot, reason }) = p.decision else {
            panic!("expected missed: {p:?}")
        };
        assert_eq!(slot, utc("2026-12-02T08:00:00Z"));
        assert!(reason.contains("policy skip"), "{reason}");
        assert!(reason.contains("1h late"), "{reason}");
        assert!(reason.contains("1 earlier slot(s)"), "{reason}");
        assert_eq!(p.next, Some(utc("2026-12-03T08:00:00Z")));
        // Three days: the same, and the walk starts a day back.
        clock.advance(Duration::days(2) + Duration::hours(2));
        let p = plan(
            &spec,
            cursor,
            clock.now(),
            MissedRunPolicy::Skip,
            HOUR,
            &none,
        );
        let Some(Decision::Missed { slot, reason }) = p.decision else {
            panic!("expected missed: {p:?}")
        };
        assert_eq!(slot, utc("2026-12-04T08:00:00Z"));
        assert!(
            reason.contains("earlier slots were not run either"),
            "{reason}"
        );
        assert_eq!(p.next, Some(utc("2026-12-05T08:00:00Z")));
    }

    #[test]
    fn run_once_fires_the_latest_slot_within_grace_only() {
        let spec = daily_0900();
        let cursor = utc("2026-12-01T08:00:00Z");
        let clock = ManualClock::new(cursor);
        // 30 minutes late, grace one hour: runs once, late.
        clock.advance(Duration::minutes(30));
        let p = plan(
            &spec,
            cursor,
            clock.now(),
            MissedRunPolicy::RunOnce,
            HOUR,
            &none,
        );
        match p.decision {
            Some(Decision::Fire {
                slot,
                note: Some(note),
            }) => {
                assert_eq!(slot, cursor);
                assert!(note.contains("ran late"), "{note}");
                assert!(note.contains("30m late"), "{note}");
            }
            other => panic!("expected a late fire: {other:?}"),
        }
        // Two hours late: beyond the grace window, recorded as missed.
        clock.set(cursor + Duration::hours(2));
        let p = plan(
            &spec,
            cursor,
            clock.now(),
            MissedRunPolicy::RunOnce,
            HOUR,
            &none,
        );
        let Some(Decision::Missed { reason, .. }) = p.decision else {
            panic!("expected missed: {p:?}")
        };
        assert!(reason.contains("beyond the 1h catch-up window"), "{reason}");
        // Slept two days, woke 10 minutes after a slot: only that latest slot runs.
        clock.set(utc("2026-12-03T08:10:00Z"));
        let p = plan(
            &spec,
            cursor,
            clock.now(),
            MissedRunPolicy::RunOnce,
            HOUR,
            &none,
        );
        assert!(
            matches!(&p.decision, Some(Decision::Fire { slot, note: Some(_) }) if *slot == utc("2026-12-03T08:00:00Z")),
            "{p:?}"
        );
        assert_eq!(p.next, Some(utc("2026-12-04T08:00:00Z")));
    }

    #[test]
    fn a_long_sleep_walks_only_the_recent_window() {
        // Every minute, asleep for a year: the walk starts a day back, and the latest slot
        // (on time) fires.
        let spec = cron("* * * * *", "UTC");
        let cursor = utc("2025-12-01T00:00:00Z");
        let now = utc("2026-12-01T00:00:30Z");
        let started = std::time::Instant::now();
        let p = plan(&spec, cursor, now, MissedRunPolicy::Skip, HOUR, &none);
        assert!(started.elapsed() < std::time::Duration::from_secs(2));
        assert_eq!(
            p.decision,
            Some(Decision::Fire {
                slot: utc("2026-12-01T00:00:00Z"),
                note: None
            })
        );
        // A yearly schedule asleep past its slot by more than the window: the cursor's slot
        // is reported missed.
        let yearly = cron("0 0 1 1 *", "UTC");
        let cursor = utc("2026-01-01T00:00:00Z");
        let p = plan(
            &yearly,
            cursor,
            utc("2026-03-01T00:00:00Z"),
            MissedRunPolicy::RunOnce,
            HOUR,
            &none,
        );
        assert!(
            matches!(&p.decision, Some(Decision::Missed { slot, .. }) if *slot == cursor),
            "{p:?}"
        );
        assert_eq!(p.next, Some(utc("2027-01-01T00:00:00Z")));
    }

    #[test]
    fn catching_up_across_spring_forward_keeps_the_shifted_slot() {
        // 02:30 Berlin does not exist on 2026-03-29; that day's slot is 03:00+02:00 (01:00Z).
        let spec = cron("30 2 * * *", "Europe/Berlin");
        let cursor = utc("2026-03-29T01:00:00Z");
        let p = plan(
            &spec,
            cursor,
            utc("2026-03-29T01:00:20Z"),
            MissedRunPolicy::Skip,
            HOUR,
            &none,
        );
        assert_eq!(
            p.decision,
            Some(Decision::Fire {
                slot: cursor,
                note: None
            })
        );
        assert_eq!(p.next, Some(utc("2026-03-30T00:30:00Z")));
    }

    #[test]
    fn a_jittered_slot_is_due_at_its_delay_and_late_from_then() {
        let spec = daily_0900();
        let cursor = utc("2026-12-01T08:00:00Z");
        let delay = |_: DateTime<Utc>| Duration::seconds(90);
        // Before slot + jitter: nothing is due, the cursor stays.
        let p = plan(
            &spec,
            cursor,
            cursor + Duration::seconds(89),
            MissedRunPolicy::Skip,
            HOUR,
            &delay,
        );
        assert_eq!(p.decision, None);
        assert_eq!(p.next, Some(cursor));
        // At slot + jitter it fires on time, for the slot (not the delayed instant).
        let p = plan(
            &spec,
            cursor,
            cursor + Duration::seconds(90),
            MissedRunPolicy::Skip,
            HOUR,
            &delay,
        );
        assert_eq!(
            p.decision,
            Some(Decision::Fire {
                slot: cursor,
                note: None
            })
        );
        // Lateness counts from the delayed instant: 60 s after it is still on time.
        let p = plan(
            &spec,
            cursor,
            cursor + Duration::seconds(150),
            MissedRunPolicy::Skip,
            HOUR,
            &delay,
        );
        assert_eq!(
            p.decision,
            Some(Decision::Fire {
                slot: cursor,
                note: None
            })
        );
        let p = plan(
            &spec,
            cursor,
            cursor + Duration::seconds(151),
            MissedRunPolicy::Skip,
            HOUR,
            &delay,
        );
        assert!(matches!(p.decision, Some(Decision::Missed { .. })), "{p:?}");
    }

    #[test]
    fn durations_read_well() {
        assert_eq!(human(Duration::seconds(45)), "45s");
        assert_eq!(human(Duration::minutes(12)), "12m");
        assert_eq!(human(Duration::minutes(185)), "3h 5m");
        assert_eq!(human(Duration::hours(52)), "2d 4h");
        assert_eq!(human(Duration::days(7)), "7d");
    }
}
