//! Seeded randomness for generated test cases: the same sequence for the
//! same seed, and the seed printed so that a failing run can be replayed.

use super::say_uncaptured;

/// splitmix64: a small PRNG that gives the same sequence everywhere, so a
/// printed seed replays a run of generated cases exactly.
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// A number in 0..n (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    pub fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
    pub fn pick<T: Clone>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())].clone()
    }
}

/// The seed for a run of generated cases: `$VAR` when set (to replay a
/// run), else one from the clock. Printed either way.
pub fn seed_from_env(var: &str) -> u64 {
    let seed = match std::env::var(var) {
        Ok(s) => s
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{var}={s:?} is not a number")),
        Err(_) => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1),
    };
    say_uncaptured(&format!("{var}={seed} (set it to replay this run)"));
    seed
}
