//! The simulator's clock: real time (with a speed factor) for `sim up`, manual for tests.
//!
//! Controllers never sleep on wall time directly: they ask the clock for "now" and schedule
//! wake-ups at simulated instants (see `controllers::Controllers`). A manual clock jumps from
//! one scheduled wake-up to the next, so tests assert orderings and end states, never wall time.

use std::{
    sync::{Arc, Mutex, OnceLock},
    time::{Duration, Instant},
};

use k8s_openapi::jiff::{SignedDuration, Timestamp};

/// Errors of clock arithmetic.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A timestamp fell outside the representable range.
    #[error("simulated time overflowed")]
    Overflow,
}

/// `Result` with this module's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Where the simulator's "now" comes from.
#[derive(Debug, Clone)]
pub enum Clock {
    /// Wall-clock time; `speed` > 1 makes simulated time (and so every delay) pass faster.
    Real {
        /// Multiplier applied to wall time elapsed since the process first read a real clock.
        speed: f64,
    },
    /// Time moves only when a test advances it, so tests assert orderings, never wall time.
    Manual(Arc<Mutex<Timestamp>>),
}

impl Clock {
    /// A real clock at normal speed.
    pub fn real() -> Self {
        Clock::real_with_speed(1.0)
    }

    /// A real clock whose simulated time runs `speed` times faster than the wall (at least
    /// 0.01); it starts at the current wall time.
    pub fn real_with_speed(speed: f64) -> Self {
        origin();
        Clock::Real { speed: speed.max(0.01) }
    }

    /// A manual clock starting at `start`.
    pub fn manual(start: Timestamp) -> Self {
        Clock::Manual(Arc::new(Mutex::new(start)))
    }

    /// The current simulated time.
    pub fn now(&self) -> Timestamp {
        match self {
            Clock::Real { speed } if *speed == 1.0 => Timestamp::now(),
            Clock::Real { speed } => {
                let (wall, start) = origin();
                let elapsed = wall.elapsed().mul_f64(speed.max(0.01));
                SignedDuration::try_from(elapsed)
                    .ok()
                    .and_then(|elapsed| start.checked_add(elapsed).ok())
                    .unwrap_or_else(Timestamp::now)
            }
            Clock::Manual(now) => *now.lock().unwrap_or_else(|poisoned| poisoned.into_inner()),
        }
    }

    /// Moves a manual clock forward; a real clock ignores it.
    pub fn advance(&self, by: SignedDuration) {
        if let Clock::Manual(now) = self {
            let mut now = now.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            *now = now.checked_add(by).unwrap_or(*now);
        }
    }

    /// Moves a manual clock to `to` when that is later than now; a real clock ignores it.
    pub fn advance_to(&self, to: Timestamp) {
        if let Clock::Manual(now) = self {
            let mut now = now.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            if to > *now {
                *now = to;
            }
        }
    }

    /// Whether time moves only when advanced.
    pub fn is_manual(&self) -> bool {
        matches!(self, Clock::Manual(_))
    }

    /// The wall time until simulated instant `at` (zero when it has passed); `None` for a
    /// manual clock, where waiting on the wall would never get there.
    pub fn wall_time_until(&self, at: Timestamp) -> Option<Duration> {
        match self {
            Clock::Manual(_) => None,
            Clock::Real { speed } => {
                let ahead = at.duration_since(self.now());
                let ahead = Duration::try_from(ahead).unwrap_or(Duration::ZERO);
                Some(ahead.div_f64(speed.max(0.01)))
            }
        }
    }
}

/// The wall instant and time a sped-up real clock counts from: the first read in this process
/// (a restarted simulator starts again from the wall time).
fn origin() -> (Instant, Timestamp) {
    static ORIGIN: OnceLock<(Instant, Timestamp)> = OnceLock::new();
    *ORIGIN.get_or_init(|| (Instant::now(), Timestamp::now()))
}

/// `at + by`, or [`Error::Overflow`].
pub fn after(at: Timestamp, by: SignedDuration) -> Result<Timestamp> {
    at.checked_add(by).map_err(|_| Error::Overflow)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manual_clock_moves_only_when_advanced() {
        let start: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
        let clock = Clock::manual(start);
        assert_eq!(clock.now(), start);
        clock.advance(SignedDuration::from_secs(90));
        assert_eq!(clock.now().to_string(), "2026-01-01T00:01:30Z");
        clock.advance_to(start);
        assert_eq!(clock.now().to_string(), "2026-01-01T00:01:30Z", "never backwards");
        assert_eq!(clock.wall_time_until(start), None);
    }

    #[test]
    fn a_fast_real_clock_shortens_waits() {
        let clock = Clock::real_with_speed(10.0);
        let in_ten = clock.now().checked_add(SignedDuration::from_secs(10)).unwrap();
        let wait = clock.wall_time_until(in_ten).unwrap();
        assert!(wait <= Duration::from_secs(1), "{wait:?}");
    }
}
