//! Cron expressions in an IANA time zone: parsing, validation and next-fire. Pure: no clock,
//! no I/O; every function takes the instant it computes from.
//!
//! Syntax (croner, POSIX/Vixie flavour): 5 fields `minute hour day-of-month month day-of-week`,
//! or 6 with `second` first; `@hourly`, `@daily`, `@weekly`, `@monthly`, `@yearly`; names
//! (`MON`, `JAN`); `L`, `W`, `#`. Day-of-week 0 and 7 are Sunday. When both day-of-month and
//! day-of-week are restricted, either may match (Vixie cron's OR).
//!
//! **Daylight saving.** croner finds the wall-clock times an expression matches (it searches
//! naive local time, where every day has 24 hours); this module decides which real instants
//! those wall-clock times fire at. The rule depends on the **hour field** only:
//!
//! - **Fixed hours** (`9`, `1,13`, `0-3`, and `@daily`, `@weekly`, `@monthly`, `@yearly`):
//!   each wall-clock time fires once. A time that happens twice (fall back) fires at its
//!   first occurrence only, whatever the minute field: `0,30 1 * * *` in `America/New_York`
//!   on a fall-back night fires at 01:00 and 01:30 EDT, not again at 01:00 and 01:30 EST. A
//!   time that does not exist (spring forward) fires once, at the first instant after the gap;
//!   several matching times in one gap (`15,45 2 * * *` in Berlin) are that one fire, and a
//!   slot at that very instant (03:00) merges with it.
//! - **Wildcard or stepped hours** (`*`, `*/2`, `1-23/2`, `3/4`, and `@hourly`): the
//!   expression is an interval and keeps it through the transition, as Vixie cron runs its
//!   wildcard jobs. A repeated hour is two real hours, and matching times fire in both
//!   passes; matching times inside a gap do not exist and are skipped.
//!
//! The walk handles shifts of up to [`MAX_SHIFT_HOURS`] hours (every zone's daylight-saving
//! shift is one hour or less, except Antarctica/Troll's two).

use chrono::{DateTime, Duration, LocalResult, NaiveDateTime, Offset, TimeZone, Utc};
use chrono_tz::Tz;
use croner::Cron;
use croner::parser::{CronParser, Seconds, Year};

/// The smallest gap allowed between two Runs of one schedule. Every Run is a Session, so a
/// schedule firing every second would flood the console.
pub const MIN_INTERVAL_SECS: i64 = 60;

/// The largest offset change the next-fire walk looks around (see the module docs).
pub const MAX_SHIFT_HOURS: i64 = 3;

/// Wall-clock matches one next-fire search visits at most (a bound, never reached by a valid
/// expression: the longest walk, an every-minute expression three hours before a fall-back,
/// visits a few hundred).
const MAX_WALK: usize = 20_000;

/// A problem with user input, naming the field it is about.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct FieldError {
    /// The JSON field (`cron`, `timezone`, ...).
    pub field: &'static str,
    /// What is wrong and how to fix it.
    pub message: String,
}

impl FieldError {
    /// An error about `field`.
    pub fn new(field: &'static str, message: impl Into<String>) -> Self {
        Self {
            field,
            message: message.into(),
        }
    }
}

/// How an expression's hour field meets a daylight-saving transition (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HourRule {
    /// Fixed hours: each wall-clock time fires once, at its first occurrence; a gap fires
    /// once, at its end.
    Fixed,
    /// A wildcard or stepped hour field: both passes of a repeated hour fire; gaps are skipped.
    Interval,
}

impl HourRule {
    /// The rule of a (trimmed) expression, read from its hour field.
    pub fn of(expr: &str) -> Self {
        let expr = expr.trim();
        if let Some(nick) = expr.strip_prefix('@') {
            return if nick.eq_ignore_ascii_case("hourly") {
                HourRule::Interval
            } else {
                HourRule::Fixed
            };
        }
        let fields: Vec<&str> = expr.split_whitespace().collect();
        let hour = match fields.len() {
            6 => fields[2],
            _ => fields.get(1).copied().unwrap_or("*"),
        };
        if hour.contains(['*', '/', '?']) {
            HourRule::Interval
        } else {
            HourRule::Fixed
        }
    }
}

/// The instant a local wall-clock time stands for in `tz`: the time itself, its first
/// occurrence when it happens twice (fall back), or the first instant after the gap it falls
/// in (spring forward). The fixed-hours rule, for one time (a one-shot plan's).
pub fn resolve_local(tz: Tz, wall: NaiveDateTime) -> Option<DateTime<Utc>> {
    match tz.from_local_datetime(&wall) {
        LocalResult::Single(t) | LocalResult::Ambiguous(t, _) => Some(t.to_utc()),
        LocalResult::None => gap_end(tz, wall),
    }
}

/// The first instant after the gap `wall` falls in (its local time is the gap's end): the
/// first valid minute after `wall`, then back second by second to where the gap ends.
fn gap_end(tz: Tz, wall: NaiveDateTime) -> Option<DateTime<Utc>> {
    let valid = |w: NaiveDateTime| match tz.from_local_datetime(&w) {
        LocalResult::Single(t) | LocalResult::Ambiguous(t, _) => Some(t.to_utc()),
        LocalResult::None => None,
    };
    let mut probe = wall;
    for _ in 0..=(MAX_SHIFT_HOURS * 60) {
        probe += Duration::minutes(1);
        if valid(probe).is_some() {
            let mut end = probe;
            while end - Duration::seconds(1) > wall && valid(end - Duration::seconds(1)).is_some() {
                end -= Duration::seconds(1);
            }
            return valid(end);
        }
    }
    None
}

/// What one matching wall-clock time stands for: the earliest instant it orders the walk by,
/// and the (at most two) instants it fires at.
type Fires = (DateTime<Utc>, [Option<DateTime<Utc>>; 2]);

/// A parsed cron expression bound to its time zone.
#[derive(Debug, Clone)]
pub struct CronSpec {
    cron: Cron,
    tz: Tz,
    rule: HourRule,
}

/// Parses a cron expression: 5 fields, or 6 with seconds first, or an `@` nickname.
pub fn parse_cron(expr: &str) -> Result<Cron, FieldError> {
    let expr = expr.trim();
    if expr.is_empty() {
        return Err(FieldError::new(
            "cron",
            "must not be empty; e.g. \"0 9 * * 1-5\"",
        ));
    }
    if !expr.starts_with('@') {
        let n = expr.split_whitespace().count();
        if n != 5 && n != 6 {
            return Err(FieldError::new(
                "cron",
                format!(
                    "{expr:?} has {n} fields; use 5 (minute hour day-of-month month \
                     day-of-week), or 6 with seconds first"
                ),
            ));
        }
    }
    CronParser::builder()
        .seconds(Seconds::Optional)
        .year(Year::Disallowed)
        .build()
        .parse(expr)
        .map_err(|e| {
            // croner's words ("Component error: Number out of bounds") name no part: say
            // which part is wrong and what it may be, when we can tell.
            let why = explain(expr).unwrap_or_else(|| e.to_string());
            FieldError::new(
                "cron",
                format!("{expr:?} is not a valid cron expression: {why}"),
            )
        })
}

/// The parts of a 5-field expression (a 6th, `second`, comes first), with their ranges and
/// names.
const PARTS: [(&str, u32, u32, &[&str]); 6] = [
    ("second", 0, 59, &[]),
    ("minute", 0, 59, &[]),
    ("hour", 0, 23, &[]),
    ("day of month", 1, 31, &[]),
    (
        "month",
        1,
        12,
        &[
            "JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC",
        ],
    ),
    (
        "day of week",
        0,
        7,
        &["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"],
    ),
];

/// What is wrong with a cron expression, in words that name the part ("minute must be
/// 0–59, not 61"); `None` when no part is wrong in a way this can tell.
pub fn explain(expr: &str) -> Option<String> {
    let fields: Vec<&str> = expr.split_whitespace().collect();
    let parts = match fields.len() {
        5 => &PARTS[1..],
        6 => &PARTS[..],
        _ => return None,
    };
    for (field, (name, lo, hi, names)) in fields.iter().zip(parts) {
        for item in field.split(',') {
            if let Some(why) = explain_item(item, name, *lo, *hi, names) {
                return Some(why);
            }
        }
    }
    None
}

fn explain_item(item: &str, name: &str, lo: u32, hi: u32, names: &[&str]) -> Option<String> {
    let range = if names.is_empty() {
        format!("{lo}–{hi}")
    } else {
        format!("{lo}–{hi} or {}–{}", names[0], names[names.len() - 1])
    };
    if item.is_empty() {
        return Some(format!("{name} has an empty item (two commas in a row?)"));
    }
    let (base, step) = match item.split_once('/') {
        Some((b, s)) => (b, Some(s)),
        None => (item, None),
    };
    if let Some(step) = step {
        match step.parse::<u32>() {
            Ok(0) => return Some(format!("{name}: the step after / must be at least 1")),
            Ok(_) => {}
            Err(_) => {
                return Some(format!(
                    "{name}: the step after / must be a number, not {step:?}"
                ));
            }
        }
    }
    // L, W and # (last day, nearest weekday, nth weekday) are croner's to judge.
    if base == "*" || base == "?" || base.contains(['L', 'W', '#', 'l', 'w']) {
        return None;
    }
    let value = |v: &str| -> Result<u32, String> {
        if let Ok(n) = v.parse::<u32>() {
            return if (lo..=hi).contains(&n) {
                Ok(n)
            } else {
                Err(format!("{name} must be {range}, not {n}"))
            };
        }
        match names.iter().position(|n| n.eq_ignore_ascii_case(v)) {
            Some(i) => Ok(i as u32 + lo.max(if names.len() == 12 { 1 } else { 0 })),
            None => Err(format!("{name} must be {range}, not {v:?}")),
        }
    };
    let checked = match base.split_once('-') {
        Some((a, b)) => value(a).and_then(|a| {
            value(b).and_then(|b| {
                if a <= b {
                    Ok(())
                } else {
                    Err(format!(
                        "{name} range {base} runs backwards; write it low to high"
                    ))
                }
            })
        }),
        None => value(base).map(drop),
    };
    checked.err()
}

/// Parses an IANA time zone name (`Europe/Berlin`, `America/New_York`, `UTC`).
pub fn parse_timezone(name: &str) -> Result<Tz, FieldError> {
    let name = name.trim();
    name.parse::<Tz>().map_err(|_| {
        FieldError::new(
            "timezone",
            format!("{name:?} is not an IANA time zone; e.g. \"Europe/Berlin\" or \"UTC\""),
        )
    })
}

impl CronSpec {
    /// Parses the expression and the zone, without checking when it fires.
    pub fn parse(expr: &str, timezone: &str) -> Result<Self, FieldError> {
        let tz = parse_timezone(timezone)?;
        let cron = parse_cron(expr)?;
        Ok(Self {
            cron,
            tz,
            rule: HourRule::of(expr),
        })
    }

    /// Parses and checks that the expression fires after `now` and never more often than
    /// once a minute ([`MIN_INTERVAL_SECS`]).
    pub fn validate(expr: &str, timezone: &str, now: DateTime<Utc>) -> Result<Self, FieldError> {
        let spec = Self::parse(expr, timezone)?;
        let next = spec.upcoming(now, 8);
        let Some(first) = next.first() else {
            return Err(FieldError::new(
                "cron",
                format!("{:?} never fires (e.g. February 30th)", expr.trim()),
            ));
        };
        let mut prev = *first;
        for t in next.iter().skip(1) {
            if (*t - prev).num_seconds() < MIN_INTERVAL_SECS {
                return Err(FieldError::new(
                    "cron",
                    format!(
                        "{:?} fires more often than once a minute; every Run is a Session, \
                         so the shortest interval is {MIN_INTERVAL_SECS} seconds",
                        expr.trim()
                    ),
                ));
            }
            prev = *t;
        }
        Ok(spec)
    }

    /// The time zone.
    pub fn timezone(&self) -> Tz {
        self.tz
    }

    /// How the expression meets daylight-saving transitions.
    pub fn hour_rule(&self) -> HourRule {
        self.rule
    }

    /// The first slot strictly after `t`, or `None` when there is none (croner searches a
    /// bounded range).
    ///
    /// Walks the wall-clock times the expression matches, in order, and maps each to the
    /// instants it fires at ([`CronSpec::instants`]). The earliest instant of a wall-clock
    /// time never decreases along the walk, so the first one after `t` is the answer, except
    /// that a repeated hour's second pass (interval expressions only) comes after wall-clock
    /// times later than its own: when a fall-back lies ahead the walk starts
    /// [`MAX_SHIFT_HOURS`] earlier and keeps the smallest instant after `t`.
    pub fn next_after(&self, t: DateTime<Utc>) -> Option<DateTime<Utc>> {
        let local = t.with_timezone(&self.tz).naive_local();
        let shift = Duration::hours(MAX_SHIFT_HOURS);
        let look_back = self.rule == HourRule::Interval && self.offset(t) > self.offset(t + shift);
        let mut wall = if look_back { local - shift } else { local };
        let mut best: Option<DateTime<Utc>> = None;
        for _ in 0..MAX_WALK {
            wall = self.cron.find_next_occurrence(&wall, false).ok()?;
            let (order, fires) = self.instants(wall)?;
            if best.is_some_and(|b| order >= b) {
                break;
            }
            for i in fires.into_iter().flatten() {
                if i > t && best.is_none_or(|b| i < b) {
                    best = Some(i);
                }
            }
            // Nothing later in the walk can come before this wall-clock time's own first
            // instant.
            if best == Some(order) {
                break;
            }
        }
        best
    }

    /// The instants one matching wall-clock time fires at, per the hour rule, after the
    /// earliest instant it stands for (its first occurrence, or the end of the gap it falls
    /// in), which orders the walk.
    fn instants(&self, wall: NaiveDateTime) -> Option<Fires> {
        Some(match self.tz.from_local_datetime(&wall) {
            LocalResult::Single(t) => {
                let t = t.to_utc();
                (t, [Some(t), None])
            }
            LocalResult::Ambiguous(first, second) => {
                let (first, second) = (first.to_utc(), second.to_utc());
                match self.rule {
                    HourRule::Fixed => (first, [Some(first), None]),
                    HourRule::Interval => (first, [Some(first), Some(second)]),
                }
            }
            LocalResult::None => {
                let end = gap_end(self.tz, wall)?;
                match self.rule {
                    HourRule::Fixed => (end, [Some(end), None]),
                    HourRule::Interval => (end, [None, None]),
                }
            }
        })
    }

    /// The zone's UTC offset at `t`, in seconds.
    fn offset(&self, t: DateTime<Utc>) -> i32 {
        self.tz
            .offset_from_utc_datetime(&t.naive_utc())
            .fix()
            .local_minus_utc()
    }

    /// The next `n` slots strictly after `t`, in the schedule's zone.
    pub fn upcoming(&self, t: DateTime<Utc>, n: usize) -> Vec<DateTime<Tz>> {
        let mut out = Vec::with_capacity(n);
        let mut cursor = t;
        while out.len() < n {
            let Some(next) = self.next_after(cursor) else {
                break;
            };
            out.push(next.with_timezone(&self.tz));
            cursor = next;
        }
        out
    }

    /// The expression in plain English ("At 09:00 on Monday through Friday.").
    pub fn describe(&self) -> String {
        self.cron.describe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utc(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().to_utc()
    }

    fn fires(expr: &str, tz: &str, from: &str, n: usize) -> Vec<String> {
        CronSpec::parse(expr, tz)
            .unwrap()
            .upcoming(utc(from), n)
            .iter()
            .map(|t| t.to_rfc3339())
            .collect()
    }

    #[test]
    fn errors_name_the_part_and_its_range() {
        let why = |e: &str| parse_cron(e).unwrap_err().message;
        assert!(
            why("61 * * * *").ends_with("minute must be 0–59, not 61"),
            "{}",
            why("61 * * * *")
        );
        assert!(why("* 24 * * *").ends_with("hour must be 0–23, not 24"));
        assert!(why("0 9 32 * *").ends_with("day of month must be 1–31, not 32"));
        assert!(why("0 9 * 13 *").ends_with("month must be 1–12 or JAN–DEC, not 13"));
        assert!(why("0 9 * * 8").ends_with("day of week must be 0–7 or SUN–SAT, not 8"));
        assert!(why("0 9 * * FOO").ends_with("day of week must be 0–7 or SUN–SAT, not \"FOO\""));
        assert!(why("*/0 * * * *").ends_with("minute: the step after / must be at least 1"));
        assert!(
            why("5-2 * * * *").ends_with("minute range 5-2 runs backwards; write it low to high")
        );
        assert!(why("61 0 9 * * *").ends_with("second must be 0–59, not 61"));
        // Valid names and forms pass the explanation (croner decides the rest).
        assert_eq!(explain("0 9 * JAN-DEC MON-FRI"), None);
        assert_eq!(explain("0 9 L * *"), None);
        assert!(parse_cron("0 9 * * MON-FRI").is_ok());
    }

    #[test]
    fn five_fields_in_several_zones() {
        // Weekdays at 09:00 local.
        assert_eq!(
            fires("0 9 * * 1-5", "Europe/Berlin", "2026-12-04T12:00:00Z", 2),
            ["2026-12-07T09:00:00+01:00", "2026-12-08T09:00:00+01:00"]
        );
        assert_eq!(
            fires(
                "0 9 * * MON-FRI",
                "America/New_York",
                "2026-07-01T00:00:00Z",
                2
            ),
            ["2026-07-01T09:00:00-04:00", "2026-07-02T09:00:00-04:00"]
        );
        assert_eq!(
            fires("30 8 * * *", "Asia/Kolkata", "2026-01-01T00:00:00Z", 1),
            ["2026-01-01T08:30:00+05:30"]
        );
        assert_eq!(
            fires("0 0 1 * *", "UTC", "2026-01-15T00:00:00Z", 2),
            ["2026-02-01T00:00:00+00:00", "2026-03-01T00:00:00+00:00"]
        );
        // Southern hemisphere: Sydney is on daylight time (+11) in January.
        assert_eq!(
            fires("0 7 * * *", "Australia/Sydney", "2026-01-10T00:00:00Z", 1),
            ["2026-01-11T07:00:00+11:00"]
        );
    }

    #[test]
    fn six_fields_put_seconds_first_and_nicknames_work() {
        assert_eq!(
            fires("30 0 9 * * *", "UTC", "2026-01-01T00:00:00Z", 1),
            ["2026-01-01T09:00:30+00:00"]
        );
        assert_eq!(
            fires("@daily", "Europe/London", "2026-06-01T12:00:00Z", 1),
            ["2026-06-02T00:00:00+01:00"]
        );
    }

    #[test]
    fn sunday_is_zero_or_seven() {
        let a = fires("0 10 * * 0", "UTC", "2026-03-02T00:00:00Z", 1);
        let b = fires("0 10 * * 7", "UTC", "2026-03-02T00:00:00Z", 1);
        assert_eq!(a, ["2026-03-08T10:00:00+00:00"]);
        assert_eq!(a, b);
    }

    #[test]
    fn spring_forward_fires_once_at_the_next_valid_instant() {
        // Berlin 2026-03-29: 02:00 → 03:00. 02:30 does not exist that day.
        assert_eq!(
            fires("30 2 * * *", "Europe/Berlin", "2026-03-28T12:00:00Z", 3),
            [
                "2026-03-29T03:00:00+02:00",
                "2026-03-30T02:30:00+02:00",
                "2026-03-31T02:30:00+02:00"
            ]
        );
        // New York 2026-03-08: 02:00 → 03:00.
        assert_eq!(
            fires("15 2 * * *", "America/New_York", "2026-03-07T12:00:00Z", 2),
            ["2026-03-08T03:00:00-04:00", "2026-03-09T02:15:00-04:00"]
        );
    }

    #[test]
    fn fall_back_fires_once() {
        // Berlin 2026-10-25: 03:00 → 02:00. 02:30 happens twice; it fires at the first.
        assert_eq!(
            fires("30 2 * * *", "Europe/Berlin", "2026-10-24T12:00:00Z", 2),
            ["2026-10-25T02:30:00+02:00", "2026-10-26T02:30:00+01:00"]
        );
        // Searching from the fire itself (the scheduler always does) does not find the second
        // pass either.
        assert_eq!(
            fires("30 2 * * *", "Europe/Berlin", "2026-10-25T00:30:00Z", 1),
            ["2026-10-26T02:30:00+01:00"]
        );
        // Even a search that starts inside the second pass (02:00+01:00) skips it: a fixed
        // local time never fires in the repeated half.
        assert_eq!(
            fires("30 2 * * *", "Europe/Berlin", "2026-10-25T01:00:00Z", 1),
            ["2026-10-26T02:30:00+01:00"]
        );
        // New York 2026-11-01: 02:00 → 01:00. 01:30 happens twice.
        assert_eq!(
            fires("30 1 * * *", "America/New_York", "2026-10-31T12:00:00Z", 2),
            ["2026-11-01T01:30:00-04:00", "2026-11-02T01:30:00-05:00"]
        );
    }

    #[test]
    fn hourly_fires_in_both_passes_of_a_repeated_hour() {
        assert_eq!(
            fires("0 * * * *", "Europe/Berlin", "2026-10-24T22:30:00Z", 4),
            [
                "2026-10-25T01:00:00+02:00",
                "2026-10-25T02:00:00+02:00",
                "2026-10-25T02:00:00+01:00",
                "2026-10-25T03:00:00+01:00"
            ]
        );
    }

    #[test]
    fn bad_expressions_name_the_cron_field() {
        for bad in [
            "",
            "* * * *",
            "* * * * * * *",
            "61 * * * *",
            "a b c d e",
            "0 25 * * *",
        ] {
            let e = CronSpec::parse(bad, "UTC").unwrap_err();
            assert_eq!(e.field, "cron", "{bad:?}: {e}");
        }
        let now = utc("2026-01-01T00:00:00Z");
        let e = CronSpec::validate("0 0 30 2 *", "UTC", now).unwrap_err();
        assert_eq!(e.field, "cron");
        assert!(e.message.contains("never fires"), "{e}");
        let e = CronSpec::validate("*/10 * * * * *", "UTC", now).unwrap_err();
        assert!(e.message.contains("once a minute"), "{e}");
        assert!(CronSpec::validate("0 * * * * *", "UTC", now).is_ok());
    }

    #[test]
    fn unknown_zones_name_the_timezone_field() {
        for bad in ["Mars/Olympus", "", "CEST+1", "europe/berlin"] {
            let e = CronSpec::parse("* * * * *", bad).unwrap_err();
            assert_eq!(e.field, "timezone", "{bad:?}: {e}");
        }
        assert!(CronSpec::parse("* * * * *", "Europe/Berlin").is_ok());
        assert!(CronSpec::parse("* * * * *", "UTC").is_ok());
    }

    #[test]
    fn describes_in_plain_words() {
        let d = CronSpec::parse("0 9 * * 1-5", "UTC").unwrap().describe();
        assert!(d.contains("09:00"), "{d}");
    }
}

#[cfg(test)]
#[path = "dst_tests.rs"]
mod dst_tests;
