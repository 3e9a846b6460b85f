//! SplitMix64: seeded, deterministic draws, so a generated instance is the same on every run.
//! Shared by the least-load benches' instance and `core/tests/least_load.rs`.

pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub fn unit(&mut self) -> f64 {
        ((self.next() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    /// lognormal(0, sigma), via Box-Muller
    pub fn lognormal(&mut self, sigma: f64) -> f64 {
        let (a, b) = (self.unit(), self.unit());
        (sigma * (-2.0 * a.ln()).sqrt() * (std::f64::consts::TAU * b).cos()).exp()
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}
