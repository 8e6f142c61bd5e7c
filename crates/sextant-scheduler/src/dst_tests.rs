//! Daylight-saving table tests for [`CronSpec::next_after`]: many zones, both transitions of
//! several years, expressions with several minutes and several hours. Each case is checked
//! against a brute-force reading of the rule in `cron`'s module docs (every minute of real
//! time around the transition, kept or not by the rule), and a few against times written
//! out by hand.

use chrono::{DateTime, Duration, Offset, TimeZone, Utc};
use chrono_tz::Tz;

use super::*;

/// Zones with transitions at different local times (02:00, 01:00, midnight, 03:00), with
/// 30-minute and two-hour shifts, both hemispheres, negative DST (Dublin).
const DST_ZONES: &[&str] = &[
    "Europe/Berlin",
    "Europe/London",
    "Europe/Dublin",
    "America/New_York",
    "America/Chicago",
    "America/Los_Angeles",
    "America/Havana",
    "America/Santiago",
    "Asia/Beirut",
    "Africa/Cairo",
    "Australia/Sydney",
    "Australia/Lord_Howe",
    "Pacific/Auckland",
    "Pacific/Chatham",
    "Antarctica/Troll",
];

const YEARS: &[i32] = &[2026, 2027, 2028, 2030];

/// Several minutes, several hours, ranges, steps, wildcards.
const EXPRESSIONS: &[&str] = &[
    "0,30 1 * * *",
    "15,45 2 * * *",
    "0 1,2,3 * * *",
    "30 0-3 * * *",
    "0,20,40 1-3 * * *",
    "*/10 1 * * *",
    "* 2 * * *",
    "59 1 * * *",
    "30 2 * * *",
    "0 3 * * *",
    "0 0 * * *",
    "45 23 * * *",
    "*/15 * * * *",
    "0 * * * *",
    "30 * * * *",
    "5 */2 * * *",
    "0 1-23/2 * * *",
    "0,30 */1 * * *",
];

fn offset(tz: Tz, t: DateTime<Utc>) -> i32 {
    tz.offset_from_utc_datetime(&t.naive_utc())
        .fix()
        .local_minus_utc()
}

/// The instants in `year` at which the zone's offset changes (to the minute).
fn transitions(tz: Tz, year: i32) -> Vec<DateTime<Utc>> {
    let start = Utc.with_ymd_and_hms(year, 1, 1, 0, 0, 0).unwrap();
    let end = Utc.with_ymd_and_hms(year + 1, 1, 1, 0, 0, 0).unwrap();
    let mut out = Vec::new();
    let mut t = start;
    while t < end {
        let next = t + Duration::hours(1);
        if offset(tz, t) != offset(tz, next) {
            let mut m = t;
            while offset(tz, m + Duration::minutes(1)) == offset(tz, t) {
                m += Duration::minutes(1);
            }
            out.push(m + Duration::minutes(1));
        }
        t = next;
    }
    out
}

/// The rule read literally: every minute of real time in `[from, to)` whose wall-clock time
/// the expression matches fires, except (fixed hours) a wall-clock time's second occurrence;
/// and (fixed hours) a gap that contains a matching wall-clock time fires once, at its end.
fn reference(expr: &str, tz: Tz, from: DateTime<Utc>, to: DateTime<Utc>) -> Vec<DateTime<Utc>> {
    let cron = parse_cron(expr).unwrap();
    let rule = HourRule::of(expr);
    let matches = |w: &chrono::NaiveDateTime| cron.is_time_matching(w).unwrap();
    let mut out = Vec::new();
    let mut t = from;
    while t < to {
        let wall = t.with_timezone(&tz).naive_local();
        let first = tz.from_local_datetime(&wall).earliest().map(|d| d.to_utc()) == Some(t);
        if matches(&wall) && (rule == HourRule::Interval || first) {
            out.push(t);
        }
        let before = (t - Duration::minutes(1)).with_timezone(&tz).naive_local();
        if rule == HourRule::Fixed && wall - before > Duration::minutes(1) {
            let mut w = before + Duration::minutes(1);
            let mut hit = false;
            while w < wall {
                hit |= matches(&w);
                w += Duration::minutes(1);
            }
            if hit && out.last() != Some(&t) {
                out.push(t);
            }
        }
        t += Duration::minutes(1);
    }
    out
}

/// `next_after`, chained from just before `from`, up to `to`.
fn walked(spec: &CronSpec, from: DateTime<Utc>, to: DateTime<Utc>) -> Vec<DateTime<Utc>> {
    let mut out = Vec::new();
    let mut t = from - Duration::seconds(1);
    while let Some(n) = spec.next_after(t) {
        if n >= to {
            break;
        }
        assert!(n > t, "next_after went backwards: {t} -> {n}");
        out.push(n);
        t = n;
    }
    out
}

fn show(tz: Tz, v: &[DateTime<Utc>]) -> Vec<String> {
    v.iter()
        .map(|t| t.with_timezone(&tz).to_rfc3339())
        .collect()
}

#[test]
fn every_zone_year_and_transition_follows_the_rule() {
    let mut cases = 0;
    for zone in DST_ZONES {
        let tz: Tz = zone.parse().unwrap();
        for &year in YEARS {
            let ts = transitions(tz, year);
            // Both transitions of the year are covered (zones that dropped DST are not listed).
            assert_eq!(ts.len(), 2, "{zone} {year}: {ts:?}");
            for t in ts {
                let (from, to) = (t - Duration::hours(6), t + Duration::hours(6));
                for expr in EXPRESSIONS {
                    let spec = CronSpec::parse(expr, zone).unwrap();
                    let want = reference(expr, tz, from, to);
                    let got = walked(&spec, from, to);
                    assert_eq!(
                        show(tz, &got),
                        show(tz, &want),
                        "{expr:?} in {zone} around {t} ({year})"
                    );
                    cases += 1;
                }
            }
        }
    }
    assert_eq!(cases, DST_ZONES.len() * YEARS.len() * 2 * EXPRESSIONS.len());
}

#[test]
fn zones_without_transitions_fire_on_the_plain_wall_clock() {
    for zone in ["UTC", "Asia/Tokyo", "America/Sao_Paulo", "Asia/Tehran"] {
        let tz: Tz = zone.parse().unwrap();
        assert!(transitions(tz, 2027).is_empty(), "{zone}");
        let from = Utc.with_ymd_and_hms(2027, 3, 27, 0, 0, 0).unwrap();
        let to = from + Duration::days(2);
        for expr in EXPRESSIONS {
            let spec = CronSpec::parse(expr, zone).unwrap();
            assert_eq!(
                walked(&spec, from, to),
                reference(expr, tz, from, to),
                "{expr}"
            );
        }
    }
}

fn fires(expr: &str, zone: &str, from: &str, to: &str) -> Vec<String> {
    let tz: Tz = zone.parse().unwrap();
    let spec = CronSpec::parse(expr, zone).unwrap();
    let at = |s: &str| DateTime::parse_from_rfc3339(s).unwrap().to_utc();
    show(tz, &walked(&spec, at(from), at(to)))
}

#[test]
fn the_issue_cases_fire_twice_not_four_times() {
    // New York, 2027-11-07: 02:00 EDT falls back to 01:00 EST; 01:00-01:59 happens twice.
    assert_eq!(
        fires(
            "0,30 1 7 11 *",
            "America/New_York",
            "2027-11-06T00:00:00Z",
            "2027-11-09T00:00:00Z"
        ),
        ["2027-11-07T01:00:00-04:00", "2027-11-07T01:30:00-04:00"]
    );
    // Berlin, 2027-10-31: 03:00 CEST falls back to 02:00 CET.
    assert_eq!(
        fires(
            "15,45 2 31 10 *",
            "Europe/Berlin",
            "2027-10-30T00:00:00Z",
            "2027-11-01T00:00:00Z"
        ),
        ["2027-10-31T02:15:00+02:00", "2027-10-31T02:45:00+02:00"]
    );
    // From inside the second pass the fixed slots of that night do not come back.
    assert_eq!(
        fires(
            "0,30 1 * * *",
            "America/New_York",
            "2027-11-07T06:10:00Z",
            "2027-11-09T00:00:00Z"
        ),
        ["2027-11-08T01:00:00-05:00", "2027-11-08T01:30:00-05:00"]
    );
}

#[test]
fn interval_hours_keep_their_interval_through_the_repeated_hour() {
    assert_eq!(
        fires(
            "*/30 * * * *",
            "America/New_York",
            "2027-11-07T04:45:00Z",
            "2027-11-07T07:15:00Z"
        ),
        [
            "2027-11-07T01:00:00-04:00",
            "2027-11-07T01:30:00-04:00",
            "2027-11-07T01:00:00-05:00",
            "2027-11-07T01:30:00-05:00",
            "2027-11-07T02:00:00-05:00"
        ]
    );
    // Searching from the end of the first pass finds the second pass, not the next hour.
    assert_eq!(
        fires(
            "*/30 * * * *",
            "America/New_York",
            "2027-11-07T05:31:00Z",
            "2027-11-07T06:31:00Z"
        ),
        ["2027-11-07T01:00:00-05:00", "2027-11-07T01:30:00-05:00"]
    );
}

#[test]
fn a_gap_fires_fixed_hours_once_at_its_end_and_skips_interval_hours() {
    // Berlin 2027-03-28: 02:00 CET jumps to 03:00 CEST.
    assert_eq!(
        fires(
            "15,45 2 * * *",
            "Europe/Berlin",
            "2027-03-27T12:00:00Z",
            "2027-03-29T12:00:00Z"
        ),
        [
            "2027-03-28T03:00:00+02:00",
            "2027-03-29T02:15:00+02:00",
            "2027-03-29T02:45:00+02:00"
        ]
    );
    // A slot at the gap's end merges with the gap's fire.
    assert_eq!(
        fires(
            "30 2,3 * * *",
            "Europe/Berlin",
            "2027-03-27T23:00:00Z",
            "2027-03-28T03:00:00Z"
        ),
        ["2027-03-28T03:00:00+02:00", "2027-03-28T03:30:00+02:00"]
    );
    assert_eq!(
        fires(
            "30 * * * *",
            "Europe/Berlin",
            "2027-03-27T23:45:00Z",
            "2027-03-28T02:00:00Z"
        ),
        ["2027-03-28T01:30:00+01:00", "2027-03-28T03:30:00+02:00"]
    );
    // Lord Howe shifts by 30 minutes: 02:00 → 02:30 on 2027-10-03.
    assert_eq!(
        fires(
            "10,40 2 3 10 *",
            "Australia/Lord_Howe",
            "2027-10-02T00:00:00Z",
            "2027-10-04T00:00:00Z"
        ),
        ["2027-10-03T02:30:00+11:00", "2027-10-03T02:40:00+11:00"]
    );
}

#[test]
fn seconds_and_nicknames_follow_the_same_rule() {
    // 6 fields: seconds first; fixed hour 1.
    assert_eq!(
        fires(
            "30 15 1 7 11 *",
            "America/New_York",
            "2027-11-07T00:00:00Z",
            "2027-11-08T00:00:00Z"
        ),
        ["2027-11-07T01:15:30-04:00"]
    );
    assert_eq!(HourRule::of("@hourly"), HourRule::Interval);
    assert_eq!(HourRule::of("@daily"), HourRule::Fixed);
    assert_eq!(HourRule::of("0 */2 * * *"), HourRule::Interval);
    assert_eq!(HourRule::of("0 1-23/2 * * *"), HourRule::Interval);
    assert_eq!(HourRule::of("0 1,2 * * *"), HourRule::Fixed);
    assert_eq!(HourRule::of("0 0 1-3 * * *"), HourRule::Fixed);
    assert_eq!(HourRule::of("0 0 * * * *"), HourRule::Interval);
}
