//! Snowflake generator properties under a seeded, misbehaving clock: jumps forward, stalls,
//! small and large steps back.

use std::collections::BTreeSet;

use shardline_core::workerid::snowflake::{
    next_blocking, Clock, Layout, Next, Snowflake, SnowflakeError, DEFAULT_EPOCH_MS,
};

struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
}

const T0: u64 = DEFAULT_EPOCH_MS + 86_400_000;

#[test]
fn ids_strictly_increase_and_fit_the_layout_under_a_jittery_clock() {
    for (ts, wb, sb) in [(41u8, 10u8, 12u8), (39, 8, 16), (41, 16, 2)] {
        let layout = Layout::new(ts, wb, sb, DEFAULT_EPOCH_MS).unwrap();
        let worker = (1u64 << wb) - 1;
        let mut g = Snowflake::new(layout, worker).unwrap();
        let mut rng = Lcg(u64::from(ts) * 31 + u64::from(sb));
        let mut now = T0;
        let mut last = 0u64;
        let mut per_ms = std::collections::BTreeMap::<u64, u64>::new();
        let mut errors = 0;
        for _ in 0..200_000 {
            match rng.next() % 100 {
                0..=59 => {}
                60..=89 => now += 1,
                90..=94 => now += rng.next() % 50,
                95..=98 => now -= rng.next() % 11,
                _ => now -= 11 + rng.next() % 100,
            }
            match g.next(now) {
                Ok(Next::Id(id)) => {
                    assert!(id > last, "{id} after {last}");
                    last = id;
                    let p = layout.decompose(id);
                    assert_eq!(p.worker, worker);
                    assert!(p.unix_ms <= now, "never stamps a future timestamp");
                    *per_ms.entry(p.unix_ms).or_default() += 1;
                }
                Ok(Next::WaitUntil(at)) => assert!(at > now),
                Err(SnowflakeError::ClockMovedBackwards { behind_ms, .. }) => {
                    assert!(behind_ms > 10);
                    errors += 1;
                    // The host recovers by letting the clock catch up.
                    now += behind_ms;
                }
                Err(e) => panic!("{e}"),
            }
        }
        assert!(errors > 0, "the scenario includes large steps back");
        assert!(per_ms.values().all(|n| *n <= layout.ids_per_ms()));
    }
}

#[test]
fn two_workers_never_collide_even_on_the_same_millisecond() {
    let mut a = Snowflake::new(Layout::default(), 1).unwrap();
    let mut b = Snowflake::new(Layout::default(), 2).unwrap();
    let mut all = BTreeSet::new();
    for ms in 0..20 {
        for _ in 0..4096 {
            for g in [&mut a, &mut b] {
                if let Next::Id(id) = g.next(T0 + ms).unwrap() {
                    assert!(all.insert(id));
                }
            }
        }
    }
    assert_eq!(
        all.len(),
        2 * 20 * 4096,
        "the full 4096 per millisecond per worker"
    );
}

/// A clock that moves only when slept on.
struct SimClock {
    wall: u64,
    mono: u64,
}
impl Clock for SimClock {
    fn wall_ms(&mut self) -> u64 {
        self.wall
    }
    fn monotonic_ms(&mut self) -> u64 {
        self.mono
    }
    fn sleep_until(&mut self, at: u64) {
        if at > self.mono {
            self.wall += at - self.mono;
            self.mono = at;
        }
    }
}

#[test]
fn the_blocking_loop_sleeps_through_overflow_and_small_rollback() {
    let layout = Layout::new(41, 10, 4, DEFAULT_EPOCH_MS).unwrap();
    let mut g = Snowflake::new(layout, 7).unwrap();
    let mut clock = SimClock { wall: T0, mono: 0 };
    let mut ids = Vec::new();
    for _ in 0..100 {
        ids.push(next_blocking(&mut g, &mut clock).unwrap());
    }
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(
        clock.wall,
        T0 + 100 / 16,
        "waited exactly for each new millisecond"
    );
    clock.wall -= 5;
    let id = next_blocking(&mut g, &mut clock).unwrap();
    assert!(id > *ids.last().unwrap());
    clock.wall -= 50;
    assert!(matches!(
        next_blocking(&mut g, &mut clock),
        Err(SnowflakeError::ClockMovedBackwards { behind_ms: 50, .. })
    ));
}
