//! The simulator's clock: real time (with a speed factor) for `sim up`, manual for tests.

use std::sync::{Arc, Mutex};

use k8s_openapi::jiff::{SignedDuration, Timestamp};

/// Where the simulator's "now" comes from.
#[derive(Debug, Clone)]
pub enum Clock {
    /// Wall-clock time; `speed` > 1 makes simulated delays pass faster.
    Real {
        /// Multiplier applied to simulated delays.
        speed: f64,
    },
    /// Time moves only when a test advances it, so tests assert orderings, never wall time.
    Manual(Arc<Mutex<Timestamp>>),
}

impl Clock {
    /// A real clock at normal speed.
    pub fn real() -> Self {
        Clock::Real { speed: 1.0 }
    }

    /// A manual clock starting at `start`.
    pub fn manual(start: Timestamp) -> Self {
        Clock::Manual(Arc::new(Mutex::new(start)))
    }

    /// The current simulated time.
    pub fn now(&self) -> Timestamp {
        match self {
            Clock::Real { .. } => Timestamp::now(),
            Clock::Manual(now) => *now.lock().expect("clock lock"),
        }
    }

    /// Moves a manual clock forward; a real clock ignores it.
    pub fn advance(&self, by: SignedDuration) {
        if let Clock::Manual(now) = self {
            let mut now = now.lock().expect("clock lock");
            *now = now.checked_add(by).expect("clock overflow");
        }
    }
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
    }
}
