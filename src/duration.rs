//! Durations as vigil prints them in the log and the exit report.
//!
//! Its own module so that `hooks` and `report`, which both print durations,
//! need not depend on each other.

use std::time::Duration;

/// A duration for messages: `1.50s` (no floats: they cost the binary 20 KiB).
pub fn secs(d: Duration) -> String {
    format!("{}.{:02}s", d.as_secs(), d.subsec_millis() / 10)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_print_without_floats() {
        assert_eq!(secs(Duration::from_millis(1509)), "1.50s");
        assert_eq!(secs(Duration::from_millis(20)), "0.02s");
    }
}
