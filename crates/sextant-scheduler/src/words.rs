//! Plain words for when a plan runs, read deterministically (no model) into a cron expression
//! or a one-shot local time, and echoed back as such, so "every 30 minutes" (a recurring
//! `*/30 * * * *`) and "in 30 minutes" (one Run, at a time shown) cannot be confused.
//!
//! Recurring (each becomes a 5-field cron expression):
//! - `every minute`, `every N minutes` (N divides 60), `every hour`, `hourly`, `every hour at
//!   :15`, `every N hours` (N divides 24);
//! - `every day at T`, `daily at T`, `every weekday at T`, `weekdays at T`, `every weekend at
//!   T`, `every monday at T`, `every mon, wed and fri at T`;
//! - `every month on the 1st at T`, `monthly on the 15th at T`, `every month on the last day
//!   at T`.
//!
//! One-shot (a local time in the plan's zone): `once at 2026-12-24 09:00`, `on 2026-12-24 at
//! 9am`, `today at T`, `tomorrow at T`, `in 30 minutes`, `in 2 hours`, `in 3 days`.
//!
//! Times `T`: `9`, `9am`, `9:30`, `09:30`, `9.30pm`, `21:00`, `noon`, `midnight`; several with
//! one minute (`at 9 and 17`, `at 9:30 and 17:30`) become an hour list.
//!
//! Anything else is refused with examples; a cron expression goes in `cron` instead.

use chrono::{DateTime, Duration, NaiveDate, NaiveDateTime, NaiveTime, Timelike, Utc};
use chrono_tz::Tz;
use serde::Serialize;

use crate::cron::FieldError;
use crate::timing::ONCE_FORMAT;

/// What a plain-words timing was read as.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
#[ts(export)]
pub struct Understood {
    /// The words as given.
    pub input: String,
    /// A recurring plan: its cron expression.
    pub cron: Option<String>,
    /// A one-shot plan: its local time (`YYYY-MM-DDTHH:MM:SS` in the plan's zone).
    pub once_at: Option<String>,
}

const EXAMPLES: &str = "e.g. \"every weekday at 9\", \"every 30 minutes\", \"every monday and \
                        thursday at 18:30\", \"every month on the 1st at 8am\", \"tomorrow at \
                        noon\", \"in 30 minutes\", \"once at 2026-12-24 09:00\", or a cron \
                        expression in cron";

fn refuse(input: &str, why: &str) -> FieldError {
    FieldError::new(
        "when",
        format!("could not read {input:?} as a schedule: {why}; {EXAMPLES}"),
    )
}

/// Reads `input` at `now` in the plan's zone `tz` (the zone matters for `today`, `tomorrow`
/// and `in …`).
pub fn understand(input: &str, tz: Tz, now: DateTime<Utc>) -> Result<Understood, FieldError> {
    let norm: String = input
        .trim()
        .trim_end_matches(['.', '!'])
        .to_lowercase()
        .replace(',', " , ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    if norm.is_empty() {
        return Err(refuse(input, "it is empty"));
    }
    if norm.chars().count() > 200 {
        return Err(refuse(input, "it is longer than 200 characters"));
    }
    let words: Vec<&str> = norm.split(' ').collect();
    let out = |cron: Option<String>, once: Option<NaiveDateTime>| Understood {
        input: input.trim().to_string(),
        cron,
        once_at: once.map(|t| t.format(ONCE_FORMAT).to_string()),
    };
    let local_now = now.with_timezone(&tz).naive_local();
    match words.as_slice() {
        ["in", n, unit] => {
            let n = count(n).ok_or_else(|| refuse(input, "after \"in\" comes a number"))?;
            let d = match unit.trim_end_matches('s') {
                "minute" | "min" => Duration::minutes(n),
                "hour" | "hr" => Duration::hours(n),
                "day" => Duration::days(n),
                _ => return Err(refuse(input, "use minutes, hours or days after \"in N\"")),
            };
            if n == 0 || d > Duration::days(366) {
                return Err(refuse(input, "use 1 minute to a year"));
            }
            let at = local_now.with_nanosecond(0).unwrap_or(local_now) + d;
            Ok(out(None, Some(at)))
        }
        ["once", "at", rest @ ..] | ["once", "on", rest @ ..] | ["once", rest @ ..] => {
            once_at(input, rest, local_now).map(|t| out(None, Some(t)))
        }
        ["today", "at", rest @ ..] | ["tomorrow", "at", rest @ ..] => {
            let day = local_now.date() + Duration::days((words[0] == "tomorrow") as i64);
            let (hours, minute) = times(input, rest)?;
            if hours.len() != 1 {
                return Err(refuse(input, "a one-shot plan has one time"));
            }
            let at = day.and_time(hm(hours[0], minute));
            if at <= local_now {
                return Err(refuse(input, &format!("{at} has passed")));
            }
            Ok(out(None, Some(at)))
        }
        ["on", rest @ ..] if rest.first().is_some_and(|w| date(w).is_some()) => {
            once_at(input, rest, local_now).map(|t| out(None, Some(t)))
        }
        ["at", d, rest @ ..] if date(d).is_some() => {
            let mut all = vec![*d];
            all.extend_from_slice(rest);
            once_at(input, &all, local_now).map(|t| out(None, Some(t)))
        }
        ["every", "minute"] => Ok(out(Some("* * * * *".into()), None)),
        ["every", n, unit] if unit.starts_with("minute") || *unit == "mins" || *unit == "min" => {
            let n = count(n).ok_or_else(|| refuse(input, "after \"every\" comes a number"))?;
            match n {
                1 => Ok(out(Some("* * * * *".into()), None)),
                n if n > 1 && n < 60 && 60 % n == 0 => {
                    Ok(out(Some(format!("*/{n} * * * *")), None))
                }
                _ => Err(refuse(
                    input,
                    "every N minutes needs N to divide an hour (1, 2, 3, 4, 5, 6, 10, 12, 15, \
                     20 or 30); otherwise cron would restart the count at every hour",
                )),
            }
        }
        ["every", "hour"] | ["hourly"] => Ok(out(Some("0 * * * *".into()), None)),
        ["every", "hour", "at", m] | ["hourly", "at", m] => {
            let m = m
                .strip_prefix(':')
                .and_then(|m| m.parse::<u32>().ok())
                .filter(|m| *m < 60)
                .ok_or_else(|| refuse(input, "the minute of an hourly plan is written :MM"))?;
            Ok(out(Some(format!("{m} * * * *")), None))
        }
        ["every", n, unit] if unit.starts_with("hour") => {
            let n = count(n).ok_or_else(|| refuse(input, "after \"every\" comes a number"))?;
            match n {
                1 => Ok(out(Some("0 * * * *".into()), None)),
                n if n > 1 && n < 24 && 24 % n == 0 => {
                    Ok(out(Some(format!("0 */{n} * * *")), None))
                }
                _ => Err(refuse(
                    input,
                    "every N hours needs N to divide a day (1, 2, 3, 4, 6, 8 or 12)",
                )),
            }
        }
        ["every", "day", "at", rest @ ..] | ["daily", "at", rest @ ..] => {
            daily(input, rest, "*", "*").map(|c| out(Some(c), None))
        }
        ["every", "weekday", "at", rest @ ..] | ["weekdays", "at", rest @ ..] => {
            daily(input, rest, "*", "1-5").map(|c| out(Some(c), None))
        }
        ["every", "weekend", "at", rest @ ..]
        | ["weekends", "at", rest @ ..]
        | ["every", "weekend", "day", "at", rest @ ..] => {
            daily(input, rest, "*", "0,6").map(|c| out(Some(c), None))
        }
        ["every", "month", "on", "the", rest @ ..] | ["monthly", "on", "the", rest @ ..] => {
            let at = rest
                .iter()
                .position(|w| *w == "at")
                .ok_or_else(|| refuse(input, "say when in the day: \"... at 9\""))?;
            let day = match &rest[..at] {
                ["last", "day"] | ["last"] => "L".to_string(),
                [d] => ordinal(d)
                    .filter(|d| (1..=31).contains(d))
                    .map(|d| d.to_string())
                    .ok_or_else(|| refuse(input, "the day of the month is 1st to 31st, or last"))?,
                _ => {
                    return Err(refuse(
                        input,
                        "the day of the month is 1st to 31st, or last",
                    ));
                }
            };
            daily(input, &rest[at + 1..], &day, "*").map(|c| out(Some(c), None))
        }
        ["every", rest @ ..] => {
            // every <day>[ , <day>][ and <day>] at T
            let at = rest
                .iter()
                .position(|w| *w == "at")
                .ok_or_else(|| refuse(input, "say when in the day: \"... at 9\""))?;
            let mut days: Vec<u32> = Vec::new();
            for w in &rest[..at] {
                if matches!(*w, "," | "and") {
                    continue;
                }
                let d = weekday(w).ok_or_else(|| refuse(input, "that is not a day of the week"))?;
                if !days.contains(&d) {
                    days.push(d);
                }
            }
            if days.is_empty() {
                return Err(refuse(input, "name the days: \"every monday at 9\""));
            }
            days.sort_unstable();
            let dow: Vec<String> = days.iter().map(u32::to_string).collect();
            daily(input, &rest[at + 1..], "*", &dow.join(",")).map(|c| out(Some(c), None))
        }
        _ => Err(refuse(
            input,
            "those words are not a schedule Sextant reads",
        )),
    }
}

/// A small count: digits, or one to twelve in words.
fn count(w: &str) -> Option<i64> {
    const WORDS: [&str; 13] = [
        "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
        "eleven", "twelve",
    ];
    w.parse::<i64>()
        .ok()
        .filter(|n| (0..=100_000).contains(n))
        .or_else(|| WORDS.iter().position(|x| *x == w).map(|n| n as i64))
        .or((w == "a" || w == "an").then_some(1))
}

/// `1st`, `2nd`, `3rd`, `15th`, `15`.
fn ordinal(w: &str) -> Option<u32> {
    let digits = w.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let suffix = &w[digits.len()..];
    if !matches!(suffix, "" | "st" | "nd" | "rd" | "th") {
        return None;
    }
    digits.parse().ok()
}

/// A day of the week, cron's number (Sunday 0).
fn weekday(w: &str) -> Option<u32> {
    let w = w.trim_end_matches('s');
    [
        ["sun", "sunday"],
        ["mon", "monday"],
        ["tue", "tuesday"],
        ["wed", "wednesday"],
        ["thu", "thursday"],
        ["fri", "friday"],
        ["sat", "saturday"],
    ]
    .iter()
    .position(|names| {
        names.contains(&w)
            || (w == "tues" && names[0] == "tue")
            || (w == "thur" && names[0] == "thu")
    })
    .map(|n| n as u32)
}

/// `YYYY-MM-DD`.
fn date(w: &str) -> Option<NaiveDate> {
    NaiveDate::parse_from_str(w, "%Y-%m-%d").ok()
}

/// One time of day: (hour, minute).
fn time(w: &str) -> Option<(u32, u32)> {
    match w {
        "noon" | "midday" => return Some((12, 0)),
        "midnight" => return Some((0, 0)),
        _ => {}
    }
    let (body, pm) = match (w.strip_suffix("am"), w.strip_suffix("pm")) {
        (Some(b), _) => (b, Some(false)),
        (_, Some(b)) => (b, Some(true)),
        _ => (w, None),
    };
    let (h, m) = match body.split_once([':', '.']) {
        Some((h, m)) if m.len() == 2 => (h.parse::<u32>().ok()?, m.parse::<u32>().ok()?),
        Some(_) => return None,
        None => (body.parse::<u32>().ok()?, 0),
    };
    if m > 59 {
        return None;
    }
    let h = match pm {
        None if h <= 23 => h,
        Some(pm) if (1..=12).contains(&h) => (h % 12) + if pm { 12 } else { 0 },
        _ => return None,
    };
    Some((h, m))
}

fn hm(h: u32, m: u32) -> NaiveTime {
    NaiveTime::from_hms_opt(h, m, 0).unwrap_or(NaiveTime::MIN)
}

/// The times after "at": hours with one shared minute (`9 and 17`, `9:30, 13:30`). A single
/// `am`/`pm` at the end applies to each (`9 and 11 am` is not read: write each).
fn times(input: &str, ws: &[&str]) -> Result<(Vec<u32>, u32), FieldError> {
    // "9 am" → "9am"
    let mut joined: Vec<String> = Vec::new();
    for w in ws {
        if matches!(*w, "am" | "pm")
            && let Some(last) = joined.last_mut()
        {
            last.push_str(w);
            continue;
        }
        joined.push((*w).to_string());
    }
    let mut hours = Vec::new();
    let mut minute = None;
    for w in &joined {
        if matches!(w.as_str(), "," | "and") {
            continue;
        }
        let (h, m) =
            time(w).ok_or_else(|| refuse(input, &format!("{w:?} is not a time of day")))?;
        if minute.is_some_and(|x| x != m) {
            return Err(refuse(
                input,
                "times with different minutes cannot be one cron expression; make one plan each",
            ));
        }
        minute = Some(m);
        if !hours.contains(&h) {
            hours.push(h);
        }
    }
    match minute {
        Some(m) => {
            hours.sort_unstable();
            Ok((hours, m))
        }
        None => Err(refuse(input, "say when in the day after \"at\"")),
    }
}

/// `M H dom * dow` from the times after "at".
fn daily(input: &str, ws: &[&str], dom: &str, dow: &str) -> Result<String, FieldError> {
    let (hours, minute) = times(input, ws)?;
    let h: Vec<String> = hours.iter().map(u32::to_string).collect();
    Ok(format!("{minute} {} {dom} * {dow}", h.join(",")))
}

/// A one-shot `YYYY-MM-DD [at] T` (or `YYYY-MM-DDTHH:MM`), in the future of `now`.
fn once_at(input: &str, ws: &[&str], now: NaiveDateTime) -> Result<NaiveDateTime, FieldError> {
    let at = match ws {
        [one] => crate::timing::parse_local(&one.to_uppercase()).ok(),
        [d, "at", rest @ ..] | [d, rest @ ..] => match date(d) {
            Some(day) => {
                let (hours, minute) = times(input, rest)?;
                (hours.len() == 1).then(|| day.and_time(hm(hours[0], minute)))
            }
            None => None,
        },
        [] => None,
    }
    .ok_or_else(|| refuse(input, "a one-shot plan is \"once at YYYY-MM-DD HH:MM\""))?;
    if at <= now {
        return Err(refuse(input, &format!("{at} has passed")));
    }
    Ok(at)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> DateTime<Utc> {
        // Tuesday 1 December 2026, 10:00:30 UTC (11:00:30 in Berlin).
        DateTime::parse_from_rfc3339("2026-12-01T10:00:30Z")
            .unwrap()
            .to_utc()
    }

    fn read(s: &str) -> Understood {
        understand(s, "Europe/Berlin".parse().unwrap(), now())
            .unwrap_or_else(|e| panic!("{s:?}: {e}"))
    }

    fn cron(s: &str) -> String {
        read(s)
            .cron
            .unwrap_or_else(|| panic!("{s:?} is not recurring"))
    }

    fn once(s: &str) -> String {
        read(s)
            .once_at
            .unwrap_or_else(|| panic!("{s:?} is not one-shot"))
    }

    #[test]
    fn recurring_words_become_cron() {
        let table = [
            ("every weekday at 9", "0 9 * * 1-5"),
            ("Every weekday at 9:30am.", "30 9 * * 1-5"),
            ("weekdays at 5pm", "0 17 * * 1-5"),
            ("every 30 minutes", "*/30 * * * *"),
            ("every 15 mins", "*/15 * * * *"),
            ("every minute", "* * * * *"),
            ("every hour", "0 * * * *"),
            ("hourly at :15", "15 * * * *"),
            ("every 2 hours", "0 */2 * * *"),
            ("every six hours", "0 */6 * * *"),
            ("every day at noon", "0 12 * * *"),
            ("daily at midnight", "0 0 * * *"),
            ("every day at 9 and 17", "0 9,17 * * *"),
            ("every day at 9:30, 13:30 and 17:30", "30 9,13,17 * * *"),
            ("every day at 9 pm", "0 21 * * *"),
            ("every monday at 9", "0 9 * * 1"),
            ("every mon, wed and fri at 18:00", "0 18 * * 1,3,5"),
            ("every tuesday and thursday at 7.30", "30 7 * * 2,4"),
            ("every sunday at 12am", "0 0 * * 0"),
            ("every weekend at 10", "0 10 * * 0,6"),
            ("every month on the 1st at 8am", "0 8 1 * *"),
            ("monthly on the 15th at 14:45", "45 14 15 * *"),
            ("every month on the last day at 23:00", "0 23 L * *"),
        ];
        for (words, expr) in table {
            assert_eq!(cron(words), expr, "{words}");
            // Every expression it makes is one the API accepts.
            assert!(
                crate::cron::CronSpec::validate(&cron(words), "UTC", now()).is_ok(),
                "{words}"
            );
        }
    }

    #[test]
    fn one_shot_words_become_a_local_time() {
        // "in" counts from now in the plan's zone: 11:00:30 Berlin.
        assert_eq!(once("in 30 minutes"), "2026-12-01T11:30:30");
        assert_eq!(once("in 2 hours"), "2026-12-01T13:00:30");
        assert_eq!(once("in a day"), "2026-12-02T11:00:30");
        assert_eq!(once("tomorrow at 9"), "2026-12-02T09:00:00");
        assert_eq!(once("today at 6pm"), "2026-12-01T18:00:00");
        assert_eq!(once("once at 2026-12-24 09:00"), "2026-12-24T09:00:00");
        assert_eq!(once("on 2026-12-24 at 9am"), "2026-12-24T09:00:00");
        assert_eq!(once("at 2026-12-24 noon"), "2026-12-24T12:00:00");
        assert_eq!(once("once at 2026-12-24T09:00"), "2026-12-24T09:00:00");
    }

    #[test]
    fn every_30_minutes_and_in_30_minutes_read_apart() {
        let every = read("every 30 minutes");
        let in_ = read("in 30 minutes");
        assert_eq!(
            (every.cron.as_deref(), every.once_at),
            (Some("*/30 * * * *"), None)
        );
        assert_eq!(
            (in_.cron, in_.once_at.as_deref()),
            (None, Some("2026-12-01T11:30:30"))
        );
    }

    #[test]
    fn unreadable_words_name_the_when_field_with_examples() {
        for bad in [
            "",
            "sometimes",
            "every 7 minutes",
            "every 5 hours",
            "every day",
            "every day at 25",
            "every day at 9:30 and 17:00",
            "every funday at 9",
            "every month on the 32nd at 9",
            "in 0 minutes",
            "in 5 fortnights",
            "today at 9",
            "once at 2020-01-01 09:00",
            "at 9",
            "every day at 13pm",
            "\u{202e}every day at 9",
        ] {
            let e = understand(bad, "Europe/Berlin".parse().unwrap(), now()).unwrap_err();
            assert_eq!(e.field, "when", "{bad:?}");
            assert!(e.message.contains("every weekday at 9"), "{bad:?}: {e}");
        }
        let long = "every day at 9 ".repeat(20);
        assert!(understand(&long, Tz::UTC, now()).is_err());
    }
}
