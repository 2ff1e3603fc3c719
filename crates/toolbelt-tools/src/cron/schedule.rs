//! When a job fires: a schedule checked and parsed once ([`Plan`]), the next firing after a
//! moment, the period a recurring job's jitter is a share of, and the schedule in words.
//!
//! Cron expressions have Vixie cron's five fields (minute hour day-of-month month
//! day-of-week; names such as `mon` and `jan`, lists, ranges, steps, `@daily` and friends;
//! a day-of-month and a day-of-week both restricted match either). They are read in the
//! job's time zone, or in local time (`TZ`, else the system's), and the next firing is found
//! in that zone's civil time, so "9:00 every day" stays at 9:00 across daylight-saving
//! changes; a time skipped by a change fires at the first moment after it.

use std::time::Duration;

use croner::Cron;
use croner::parser::{CronParser, Seconds, Year};
use jiff::tz::TimeZone;
use jiff::{Timestamp, civil};
use toolbelt_core::Schedule;

/// The shortest period `every_seconds` may ask for.
pub const MIN_EVERY: u64 = 1;

/// The longest period `every_seconds` may ask for (a year).
pub const MAX_EVERY: u64 = 366 * 24 * 3600;

/// The latest a recurring job fires after its slot: a tenth of its period, at most this.
pub const MAX_JITTER: Duration = Duration::from_secs(15 * 60);

/// A schedule, checked: ready to say when it fires next.
#[derive(Debug, Clone)]
pub struct Plan {
    kind: Kind,
}

#[derive(Debug, Clone)]
enum Kind {
    Cron { cron: Box<Cron>, expr: String, zone: TimeZone, zone_name: Option<String> },
    Every(u64),
    At(Timestamp),
}

impl Plan {
    /// Checks `schedule`; the error says what is wrong and what is accepted.
    pub fn new(schedule: &Schedule) -> Result<Plan, String> {
        let kind = match schedule {
            Schedule::Cron { expr, tz } => {
                let zone = zone(tz.as_deref())?;
                let cron = parse_cron(expr)?;
                Kind::Cron { cron: Box::new(cron), expr: expr.trim().to_string(), zone, zone_name: tz.clone() }
            }
            Schedule::Every { seconds } => {
                if !(MIN_EVERY..=MAX_EVERY).contains(seconds) {
                    return Err(format!(
                        "every_seconds must be from {MIN_EVERY} to {MAX_EVERY} (a year); it is {seconds}"
                    ));
                }
                Kind::Every(*seconds)
            }
            Schedule::At { at } => Kind::At(moment(at, None)?),
        };
        Ok(Plan { kind })
    }

    /// Whether the schedule can fire more than once.
    pub fn repeats(&self) -> bool {
        !matches!(self.kind, Kind::At(_))
    }

    /// The first firing strictly after `after`, for a job created at `created`; `None` when
    /// there is none (a moment already past, an expression that never matches).
    pub fn next_after(&self, after: Timestamp, created: Timestamp) -> Option<Timestamp> {
        match &self.kind {
            Kind::Cron { cron, zone, .. } => {
                let start = after.to_zoned(zone.clone());
                cron.find_next_occurrence(&start, false).ok().map(|z| z.timestamp())
            }
            Kind::Every(seconds) => {
                let period = i64::try_from(*seconds).ok()?.checked_mul(1000)?;
                let since = after.as_millisecond().checked_sub(created.as_millisecond())?;
                // The slots are created + k·period, k ≥ 1; the first past `after`.
                let k = if since < 0 { 1 } else { since / period + 1 };
                let at = created.as_millisecond().checked_add(k.checked_mul(period)?)?;
                Timestamp::from_millisecond(at).ok()
            }
            Kind::At(at) => (*at > after).then_some(*at),
        }
    }

    /// The time from the firing at `slot` to the one after it: the period a recurring job's
    /// jitter is a share of.
    pub fn period_at(&self, slot: Timestamp, created: Timestamp) -> Option<Duration> {
        let next = self.next_after(slot, created)?;
        let ms = next.as_millisecond().checked_sub(slot.as_millisecond())?;
        Some(Duration::from_millis(u64::try_from(ms).ok()?))
    }

    /// The schedule in words: `cron 0 9 * * 1-5 (Europe/Paris)`, `every 90 s`, `once at …`.
    pub fn describe(&self) -> String {
        match &self.kind {
            Kind::Cron { expr, zone_name, .. } => match zone_name {
                Some(zone) => format!("cron `{expr}` ({zone})"),
                None => format!("cron `{expr}` (local time)"),
            },
            Kind::Every(seconds) => format!("every {}", every_words(*seconds)),
            Kind::At(at) => format!("once at {}", rfc3339(*at)),
        }
    }
}

/// How late a recurring job with id `job_id` fires after each slot when its period is
/// `period`: a fixed share of the period, at most a tenth of it and at most [`MAX_JITTER`],
/// the same for every firing of the job (so jobs made at once spread out, and each keeps its
/// rhythm).
pub fn jitter(job_id: &str, period: Duration) -> Duration {
    let most = (period / 10).min(MAX_JITTER);
    let hash = xxhash_rust::xxh3::xxh3_64(job_id.as_bytes());
    // A share of `most` in thousandths, from the id.
    let share = u32::try_from(hash % 1000).unwrap_or(0);
    most * share / 1000
}

/// A moment written as RFC 3339 (`2026-12-01T09:00:00Z`, `…+01:00`), or as a civil date and
/// time (`2026-12-01T09:00`, `2026-12-01 09:00:00`) read in `tz`, else in local time.
pub fn moment(text: &str, tz: Option<&str>) -> Result<Timestamp, String> {
    let text = text.trim();
    if let Ok(at) = text.parse::<Timestamp>() {
        return Ok(at);
    }
    let civil: civil::DateTime = text.parse().map_err(|_| {
        format!(
            "`{text}` is not a moment: write it as RFC 3339 (2026-12-01T09:00:00Z, 2026-12-01T09:00:00+01:00) or as a \
             local date and time (2026-12-01T09:00)"
        )
    })?;
    let zone = zone(tz)?;
    civil.to_zoned(zone).map(|z| z.timestamp()).map_err(|e| format!("`{text}` is not a moment in that time zone: {e}"))
}

/// The time zone named `tz` (IANA: `Europe/Paris`, `UTC`), else local time.
pub fn zone(tz: Option<&str>) -> Result<TimeZone, String> {
    match tz.map(str::trim) {
        None | Some("") => Ok(TimeZone::try_system().unwrap_or(TimeZone::UTC)),
        Some(name) => TimeZone::get(name).map_err(|_| {
            format!("`{name}` is not a time zone this machine knows: use an IANA name such as Europe/Paris, America/New_York or UTC")
        }),
    }
}

/// A 5-field cron expression, parsed; the error names the fields.
fn parse_cron(expr: &str) -> Result<Cron, String> {
    let parser = CronParser::builder().seconds(Seconds::Disallowed).year(Year::Disallowed).build();
    let cron = parser.parse(expr.trim()).map_err(|e| {
        format!(
            "`{}` is not a 5-field cron expression (minute hour day-of-month month day-of-week, e.g. `*/15 * * * *`, \
             `0 9 * * 1-5`): {e}",
            expr.trim()
        )
    })?;
    // One that never matches (February 30th) would never fire: say so now.
    let now = Timestamp::now().to_zoned(TimeZone::UTC);
    if cron.find_next_occurrence(&now, false).is_err() {
        return Err(format!("`{}` never matches a real date; check the day and month fields", expr.trim()));
    }
    Ok(cron)
}

/// A moment as RFC 3339 in UTC, to the second.
pub fn rfc3339(at: Timestamp) -> String {
    at.round(jiff::Unit::Second).unwrap_or(at).to_string()
}

/// A period in words: `90 s`, `15 min`, `2 h`, `1 day`.
fn every_words(seconds: u64) -> String {
    match seconds {
        s if s % 86_400 == 0 => plural(s / 86_400, "day"),
        s if s % 3600 == 0 => format!("{} h", s / 3600),
        s if s % 60 == 0 => format!("{} min", s / 60),
        s => format!("{s} s"),
    }
}

fn plural(n: u64, word: &str) -> String {
    if n == 1 { format!("1 {word}") } else { format!("{n} {word}s") }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> Timestamp {
        text.parse().unwrap()
    }

    fn cron(expr: &str, tz: &str) -> Plan {
        Plan::new(&Schedule::Cron { expr: expr.into(), tz: Some(tz.into()) }).unwrap()
    }

    #[test]
    fn cron_in_a_time_zone_keeps_its_civil_time_across_daylight_saving() {
        let plan = cron("0 9 * * *", "Europe/Paris");
        let created = at("2026-10-20T00:00:00Z");
        // Summer time (UTC+2), then winter time (UTC+1) after 25 October 2026.
        assert_eq!(plan.next_after(at("2026-10-24T12:00:00Z"), created), Some(at("2026-10-25T08:00:00Z")));
        assert_eq!(plan.next_after(at("2026-10-25T08:00:00Z"), created), Some(at("2026-10-26T08:00:00Z")));
        assert_eq!(plan.next_after(at("2026-10-23T12:00:00Z"), created), Some(at("2026-10-24T07:00:00Z")));
    }

    #[test]
    fn cron_weekdays_and_steps() {
        let plan = cron("*/15 9-10 * * mon-fri", "UTC");
        let created = at("2026-11-01T00:00:00Z");
        // 2026-11-28 is a Saturday: the next match is Monday 09:00.
        assert_eq!(plan.next_after(at("2026-11-28T12:00:00Z"), created), Some(at("2026-11-30T09:00:00Z")));
        assert_eq!(plan.next_after(at("2026-11-30T09:00:00Z"), created), Some(at("2026-11-30T09:15:00Z")));
        assert_eq!(plan.next_after(at("2026-11-30T10:45:00Z"), created), Some(at("2026-12-01T09:00:00Z")));
        assert_eq!(plan.period_at(at("2026-11-30T09:00:00Z"), created), Some(Duration::from_secs(900)));
    }

    #[test]
    fn bad_cron_expressions_say_what_is_accepted() {
        for (expr, says) in [
            ("* * * *", "5-field"),
            ("0 0 * * * *", "5-field"),
            ("61 * * * *", "5-field"),
            ("0 0 30 2 *", "never matches"),
        ] {
            let e = Plan::new(&Schedule::Cron { expr: expr.into(), tz: None }).unwrap_err();
            assert!(e.contains(says), "{expr}: {e}");
        }
        let e = Plan::new(&Schedule::Cron { expr: "* * * * *".into(), tz: Some("Mars/Olympus".into()) }).unwrap_err();
        assert!(e.contains("IANA"), "{e}");
    }

    #[test]
    fn every_counts_from_creation_and_skips_missed_slots() {
        let plan = Plan::new(&Schedule::Every { seconds: 60 }).unwrap();
        let created = at("2026-11-29T10:00:00Z");
        assert_eq!(plan.next_after(created, created), Some(at("2026-11-29T10:01:00Z")));
        // Down from 10:01 to 10:05:30: the next slot is 10:06, not 10:02.
        assert_eq!(plan.next_after(at("2026-11-29T10:05:30Z"), created), Some(at("2026-11-29T10:06:00Z")));
        assert!(Plan::new(&Schedule::Every { seconds: 0 }).unwrap_err().contains("every_seconds"));
    }

    #[test]
    fn at_is_once_and_reads_local_or_zoned_times() {
        let plan = Plan::new(&Schedule::At { at: "2026-12-01T09:00:00+01:00".into() }).unwrap();
        let created = at("2026-11-29T10:00:00Z");
        assert_eq!(plan.next_after(created, created), Some(at("2026-12-01T08:00:00Z")));
        assert_eq!(plan.next_after(at("2026-12-01T08:00:00Z"), created), None);
        assert!(!plan.repeats());
        assert_eq!(moment("2026-12-01 09:00", Some("America/New_York")).unwrap(), at("2026-12-01T14:00:00Z"));
        assert!(moment("tomorrow", None).unwrap_err().contains("RFC 3339"));
    }

    #[test]
    fn jitter_is_a_stable_share_of_the_period_capped() {
        let hour = Duration::from_secs(3600);
        let a = jitter("job_1", hour);
        assert_eq!(a, jitter("job_1", hour));
        assert!(a <= hour / 10);
        assert!(jitter("job_2", Duration::from_secs(86_400)) <= MAX_JITTER);
        let spread: std::collections::BTreeSet<_> = (0..20).map(|i| jitter(&format!("job_{i}"), hour)).collect();
        assert!(spread.len() > 10, "{spread:?}");
    }
}
