//! Snowflake ids: `timestamp | worker | sequence` packed into 63 bits (workerid-lease.md §1.8,
//! §3, §4.3).
//!
//! The generator is sans-IO: the host passes the wall clock in, and gets back an id, a time to
//! wait until, or an error. It never reads a clock and never sleeps, so a simulation can drive
//! it with any clock it likes. [`next_blocking`] is the convenience loop for hosts that do
//! have a clock.
//!
//! Uniqueness across holders of one worker id comes from a time budget rather than from the
//! reservation alone: a fenced generator only stamps timestamps in `(floor, ceiling]`, where
//! `floor` is the highest timestamp any previous holder was ever allowed to use and `ceiling`
//! is the budget this holder has had acknowledged by the registry (see
//! [`crate::workerid::Tenure`]). A previous holder that was paused, partitioned or has a
//! different wall clock can therefore never stamp a timestamp this one will use.

use std::fmt;

use crate::Error;

/// 2024-01-01T00:00:00Z. Fixed in UTC: an epoch derived from a local time zone shifts with
/// the zone and with daylight saving, which has produced duplicate ids elsewhere.
pub const DEFAULT_EPOCH_MS: u64 = 1_704_067_200_000;

/// How far the clock may step back (within one generator) before it errors instead of waiting.
pub const DEFAULT_ROLLBACK_TOLERANCE_MS: u64 = 10;

/// How long a fresh holder may wait for its wall clock to pass the fence floor before it
/// errors. The floor is normally at most one budget lookahead ahead of the previous holder's
/// clock, so this mostly absorbs clock offset between hosts.
pub const DEFAULT_MAX_FENCE_WAIT_MS: u64 = 30_000;

/// Bit widths and epoch of an id. Total width at most 63 bits, so ids are positive in any
/// signed 64-bit type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    timestamp_bits: u8,
    worker_bits: u8,
    sequence_bits: u8,
    epoch_ms: u64,
}

impl Default for Layout {
    fn default() -> Self {
        Layout {
            timestamp_bits: 41,
            worker_bits: 10,
            sequence_bits: 12,
            epoch_ms: DEFAULT_EPOCH_MS,
        }
    }
}

/// An id taken apart again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Parts {
    /// Milliseconds since the Unix epoch.
    pub unix_ms: u64,
    pub worker: u64,
    pub sequence: u64,
}

impl Layout {
    pub fn new(
        timestamp_bits: u8,
        worker_bits: u8,
        sequence_bits: u8,
        epoch_ms: u64,
    ) -> crate::Result<Layout> {
        let total = timestamp_bits as u32 + worker_bits as u32 + sequence_bits as u32;
        if total > 63 {
            return Err(Error::invalid_argument(format!(
                "snowflake layout uses {total} bits; at most 63 fit a positive 64-bit id"
            )));
        }
        if timestamp_bits < 32 {
            return Err(Error::invalid_argument(format!(
                "snowflake timestamp needs at least 32 bits, got {timestamp_bits}"
            )));
        }
        if worker_bits > 16 {
            return Err(Error::invalid_argument(format!(
                "snowflake worker field is at most 16 bits, got {worker_bits}"
            )));
        }
        if sequence_bits == 0 {
            return Err(Error::invalid_argument(
                "snowflake sequence needs at least 1 bit",
            ));
        }
        Ok(Layout {
            timestamp_bits,
            worker_bits,
            sequence_bits,
            epoch_ms,
        })
    }

    pub fn timestamp_bits(&self) -> u8 {
        self.timestamp_bits
    }
    pub fn worker_bits(&self) -> u8 {
        self.worker_bits
    }
    pub fn sequence_bits(&self) -> u8 {
        self.sequence_bits
    }
    pub fn epoch_ms(&self) -> u64 {
        self.epoch_ms
    }

    /// Number of distinct worker ids, `2^worker_bits`.
    pub fn worker_count(&self) -> u64 {
        1 << self.worker_bits
    }

    /// Ids one worker can issue per millisecond, `2^sequence_bits`.
    pub fn ids_per_ms(&self) -> u64 {
        1 << self.sequence_bits
    }

    /// The last Unix millisecond this layout can encode.
    pub fn last_unix_ms(&self) -> u64 {
        self.epoch_ms + ((1u64 << self.timestamp_bits) - 1)
    }

    pub fn decompose(&self, id: u64) -> Parts {
        let seq_mask = (1u64 << self.sequence_bits) - 1;
        let worker_mask = (1u64 << self.worker_bits) - 1;
        Parts {
            unix_ms: self.epoch_ms + (id >> (self.sequence_bits + self.worker_bits)),
            worker: (id >> self.sequence_bits) & worker_mask,
            sequence: id & seq_mask,
        }
    }
}

/// What the generator wants next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    Id(u64),
    /// Ask again once the wall clock reads at least this (Unix ms).
    WaitUntil(u64),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SnowflakeError {
    /// The wall clock is further behind the last issued timestamp than the tolerance allows.
    ClockMovedBackwards {
        behind_ms: u64,
        tolerance_ms: u64,
    },
    /// The wall clock is so far behind the fence floor that waiting is not reasonable: a
    /// previous holder of this worker id was allowed timestamps up to `floor_ms`.
    BehindFence {
        floor_ms: u64,
        now_ms: u64,
    },
    /// Timestamps up to `budget_ms` were acknowledged; the host must extend the budget first.
    BudgetExhausted {
        budget_ms: u64,
    },
    /// The generator holds no budget (not yet granted, or revoked because the reservation was
    /// lost).
    NotPermitted,
    BeforeEpoch {
        now_ms: u64,
        epoch_ms: u64,
    },
    /// The timestamp no longer fits the layout.
    TimestampOverflow {
        now_ms: u64,
        last_unix_ms: u64,
    },
    /// The clock did not advance while the generator waited for it.
    ClockStalled {
        waiting_for_ms: u64,
    },
}

impl fmt::Display for SnowflakeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SnowflakeError::ClockMovedBackwards {
                behind_ms,
                tolerance_ms,
            } => write!(
                f,
                "clock moved backwards by {behind_ms} ms (tolerance {tolerance_ms} ms)"
            ),
            SnowflakeError::BehindFence { floor_ms, now_ms } => write!(
                f,
                "clock reads {now_ms} but a previous holder of this worker id may have used timestamps up to {floor_ms}"
            ),
            SnowflakeError::BudgetExhausted { budget_ms } => {
                write!(f, "timestamp budget ends at {budget_ms}; extend it first")
            }
            SnowflakeError::NotPermitted => {
                f.write_str("no timestamp budget: the worker id is not (or no longer) held")
            }
            SnowflakeError::BeforeEpoch { now_ms, epoch_ms } => {
                write!(f, "clock reads {now_ms}, before the id epoch {epoch_ms}")
            }
            SnowflakeError::TimestampOverflow {
                now_ms,
                last_unix_ms,
            } => write!(
                f,
                "clock reads {now_ms}, past the last timestamp the layout encodes ({last_unix_ms})"
            ),
            SnowflakeError::ClockStalled { waiting_for_ms } => {
                write!(f, "clock did not reach {waiting_for_ms} while waiting for it")
            }
        }
    }
}

impl std::error::Error for SnowflakeError {}

impl From<SnowflakeError> for Error {
    fn from(e: SnowflakeError) -> Error {
        Error::invalid_state(e.to_string())
    }
}

/// One worker's id generator. `&mut self` and no shared state: give each thread its own
/// worker id rather than sharing a generator behind a lock.
#[derive(Debug, Clone)]
pub struct Snowflake {
    layout: Layout,
    worker_field: u64,
    seq_mask: u64,
    /// Last timestamp issued (Unix ms); `None` before the first id.
    last_ms: Option<u64>,
    sequence: u64,
    /// Only timestamps strictly above this may be issued.
    floor_ms: Option<u64>,
    /// Only timestamps at or below this may be issued; `None`: nothing may be issued.
    ceiling_ms: Option<u64>,
    tolerance_ms: u64,
    max_fence_wait_ms: u64,
}

impl Snowflake {
    /// A generator for a worker id the host guarantees unique by other means (configuration):
    /// no floor, unlimited budget.
    pub fn new(layout: Layout, worker: u64) -> crate::Result<Snowflake> {
        let mut g = Snowflake::fenced(layout, worker, None)?;
        g.ceiling_ms = Some(u64::MAX);
        Ok(g)
    }

    /// A generator for a reserved worker id: it issues nothing at or below `floor_ms`, and
    /// nothing until [`Snowflake::extend_budget`] grants a ceiling.
    pub fn fenced(layout: Layout, worker: u64, floor_ms: Option<u64>) -> crate::Result<Snowflake> {
        if worker >= layout.worker_count() {
            return Err(Error::invalid_argument(format!(
                "worker id {worker} does not fit {} worker bits",
                layout.worker_bits
            )));
        }
        Ok(Snowflake {
            layout,
            worker_field: worker << layout.sequence_bits,
            seq_mask: (1u64 << layout.sequence_bits) - 1,
            last_ms: None,
            sequence: 0,
            floor_ms,
            ceiling_ms: None,
            tolerance_ms: DEFAULT_ROLLBACK_TOLERANCE_MS,
            max_fence_wait_ms: DEFAULT_MAX_FENCE_WAIT_MS,
        })
    }

    pub fn with_rollback_tolerance(mut self, tolerance_ms: u64) -> Snowflake {
        self.tolerance_ms = tolerance_ms;
        self
    }

    pub fn with_max_fence_wait(mut self, max_fence_wait_ms: u64) -> Snowflake {
        self.max_fence_wait_ms = max_fence_wait_ms;
        self
    }

    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    pub fn worker(&self) -> u64 {
        self.worker_field >> self.layout.sequence_bits
    }

    /// The last timestamp issued, if any.
    pub fn last_timestamp_ms(&self) -> Option<u64> {
        self.last_ms
    }

    pub fn floor_ms(&self) -> Option<u64> {
        self.floor_ms
    }

    pub fn budget_ms(&self) -> Option<u64> {
        self.ceiling_ms
    }

    /// Raises the ceiling to an acknowledged budget. Budgets never shrink here; shrinking
    /// goes through [`Snowflake::revoke`].
    pub fn extend_budget(&mut self, ceiling_ms: u64) {
        self.ceiling_ms = Some(self.ceiling_ms.map_or(ceiling_ms, |c| c.max(ceiling_ms)));
    }

    /// Stops issuing ids at once (the reservation's deadline passed or it was fenced).
    pub fn revoke(&mut self) {
        self.ceiling_ms = None;
    }

    /// The next id at wall time `now_ms` (Unix ms), or when to ask again.
    pub fn next(&mut self, now_ms: u64) -> Result<Next, SnowflakeError> {
        let Some(ceiling) = self.ceiling_ms else {
            return Err(SnowflakeError::NotPermitted);
        };
        if now_ms < self.layout.epoch_ms {
            return Err(SnowflakeError::BeforeEpoch {
                now_ms,
                epoch_ms: self.layout.epoch_ms,
            });
        }
        if let Some(floor) = self.floor_ms {
            if now_ms <= floor {
                let gap = floor + 1 - now_ms;
                return if gap <= self.max_fence_wait_ms {
                    Ok(Next::WaitUntil(floor + 1))
                } else {
                    Err(SnowflakeError::BehindFence {
                        floor_ms: floor,
                        now_ms,
                    })
                };
            }
        }
        // The backwards check comes before any sequence update: resetting the sequence first
        // is how the original Snowflake produced duplicates (twitter-archive/snowflake#6).
        let (ms, sequence) = match self.last_ms {
            Some(last) if now_ms < last => {
                let behind = last - now_ms;
                return if behind <= self.tolerance_ms {
                    Ok(Next::WaitUntil(last))
                } else {
                    Err(SnowflakeError::ClockMovedBackwards {
                        behind_ms: behind,
                        tolerance_ms: self.tolerance_ms,
                    })
                };
            }
            Some(last) if now_ms == last => {
                if self.sequence == self.seq_mask {
                    return Ok(Next::WaitUntil(last + 1));
                }
                (last, self.sequence + 1)
            }
            _ => (now_ms, 0),
        };
        if ms > ceiling {
            return Err(SnowflakeError::BudgetExhausted { budget_ms: ceiling });
        }
        let offset = ms - self.layout.epoch_ms;
        if offset >> self.layout.timestamp_bits != 0 {
            return Err(SnowflakeError::TimestampOverflow {
                now_ms,
                last_unix_ms: self.layout.last_unix_ms(),
            });
        }
        self.last_ms = Some(ms);
        self.sequence = sequence;
        let shift = self.layout.sequence_bits + self.layout.worker_bits;
        Ok(Next::Id((offset << shift) | self.worker_field | sequence))
    }
}

/// The host's clocks, for the convenience loops that wait. Implemented by hosts (the CLI uses
/// the system clocks) and by simulations.
pub trait Clock {
    /// Wall clock, milliseconds since the Unix epoch (UTC). May jump.
    fn wall_ms(&mut self) -> u64;
    /// A clock that never goes back, for deadlines.
    fn monotonic_ms(&mut self) -> u64;
    /// Returns once `monotonic_ms()` reads at least `monotonic_ms`.
    fn sleep_until(&mut self, monotonic_ms: u64);
}

/// Waits a generator may ask for while producing one id before the clock is declared stuck:
/// a sequence overflow costs one, a tolerated rollback two.
const MAX_WAITS_PER_ID: u32 = 64;

/// Asks `generator` for an id, sleeping on `clock` whenever it says to wait.
pub fn next_blocking(
    generator: &mut Snowflake,
    clock: &mut dyn Clock,
) -> Result<u64, SnowflakeError> {
    for _ in 0..MAX_WAITS_PER_ID {
        let wall = clock.wall_ms();
        match generator.next(wall)? {
            Next::Id(id) => return Ok(id),
            Next::WaitUntil(until) => {
                let mono = clock.monotonic_ms();
                clock.sleep_until(mono + until.saturating_sub(wall));
            }
        }
    }
    Err(SnowflakeError::ClockStalled {
        waiting_for_ms: generator.last_ms.map_or(0, |l| l + 1),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: u64 = DEFAULT_EPOCH_MS + 1_000_000;

    #[test]
    fn default_layout_packs_fields_where_shardingsphere_does() {
        let mut g = Snowflake::new(Layout::default(), 5).unwrap();
        let Next::Id(id) = g.next(T0).unwrap() else {
            panic!("expected an id")
        };
        assert_eq!(id, (1_000_000 << 22) | (5 << 12));
        assert_eq!(
            Layout::default().decompose(id),
            Parts {
                unix_ms: T0,
                worker: 5,
                sequence: 0
            }
        );
    }

    #[test]
    fn layouts_that_do_not_fit_are_refused() {
        assert!(Layout::new(41, 11, 12, 0).is_err());
        assert!(Layout::new(31, 10, 12, 0).is_err());
        assert!(Layout::new(41, 10, 0, 0).is_err());
        assert!(Snowflake::new(Layout::default(), 1024).is_err());
        assert!(Layout::new(39, 8, 16, 0).is_ok());
    }

    #[test]
    fn sequence_overflow_waits_for_the_next_millisecond() {
        let layout = Layout::new(41, 10, 2, DEFAULT_EPOCH_MS).unwrap();
        let mut g = Snowflake::new(layout, 1).unwrap();
        for s in 0..4 {
            let Next::Id(id) = g.next(T0).unwrap() else {
                panic!()
            };
            assert_eq!(layout.decompose(id).sequence, s);
        }
        assert_eq!(g.next(T0).unwrap(), Next::WaitUntil(T0 + 1));
        assert!(matches!(g.next(T0 + 1).unwrap(), Next::Id(_)));
    }

    #[test]
    fn small_rollback_waits_and_large_rollback_errors_without_touching_state() {
        let mut g = Snowflake::new(Layout::default(), 1).unwrap();
        let Next::Id(first) = g.next(T0).unwrap() else {
            panic!()
        };
        assert_eq!(g.next(T0 - 10).unwrap(), Next::WaitUntil(T0));
        assert_eq!(
            g.next(T0 - 11),
            Err(SnowflakeError::ClockMovedBackwards {
                behind_ms: 11,
                tolerance_ms: 10
            })
        );
        let Next::Id(second) = g.next(T0).unwrap() else {
            panic!()
        };
        assert!(
            second > first,
            "the sequence continued instead of restarting"
        );
    }

    #[test]
    fn fenced_generator_issues_only_inside_its_budget() {
        let mut g = Snowflake::fenced(Layout::default(), 3, Some(T0)).unwrap();
        assert_eq!(g.next(T0 + 5), Err(SnowflakeError::NotPermitted));
        g.extend_budget(T0 + 10);
        assert_eq!(g.next(T0).unwrap(), Next::WaitUntil(T0 + 1), "at the floor");
        assert!(matches!(g.next(T0 + 1).unwrap(), Next::Id(_)));
        assert!(matches!(g.next(T0 + 10).unwrap(), Next::Id(_)));
        assert_eq!(
            g.next(T0 + 11),
            Err(SnowflakeError::BudgetExhausted { budget_ms: T0 + 10 })
        );
        g.extend_budget(T0 + 5);
        assert_eq!(g.budget_ms(), Some(T0 + 10), "budgets do not shrink");
        g.revoke();
        assert_eq!(g.next(T0 + 10), Err(SnowflakeError::NotPermitted));
    }

    #[test]
    fn far_behind_the_fence_is_an_error_not_a_long_wait() {
        let mut g = Snowflake::fenced(Layout::default(), 3, Some(T0 + 60_000))
            .unwrap()
            .with_max_fence_wait(30_000);
        g.extend_budget(T0 + 120_000);
        assert!(matches!(
            g.next(T0),
            Err(SnowflakeError::BehindFence { .. })
        ));
        assert_eq!(g.next(T0 + 40_000).unwrap(), Next::WaitUntil(T0 + 60_001));
    }

    #[test]
    fn timestamps_past_the_layout_overflow() {
        let layout = Layout::new(32, 10, 12, DEFAULT_EPOCH_MS).unwrap();
        let mut g = Snowflake::new(layout, 0).unwrap();
        assert!(matches!(
            g.next(layout.last_unix_ms()).unwrap(),
            Next::Id(_)
        ));
        assert!(matches!(
            g.next(layout.last_unix_ms() + 1),
            Err(SnowflakeError::TimestampOverflow { .. })
        ));
        assert!(matches!(g.next(0), Err(SnowflakeError::BeforeEpoch { .. })));
    }

    struct Frozen(u64);
    impl Clock for Frozen {
        fn wall_ms(&mut self) -> u64 {
            self.0
        }
        fn monotonic_ms(&mut self) -> u64 {
            self.0
        }
        fn sleep_until(&mut self, _: u64) {}
    }

    #[test]
    fn a_clock_that_never_advances_is_reported_not_spun_on() {
        let layout = Layout::new(41, 10, 1, DEFAULT_EPOCH_MS).unwrap();
        let mut g = Snowflake::new(layout, 0).unwrap();
        let mut clock = Frozen(T0);
        next_blocking(&mut g, &mut clock).unwrap();
        next_blocking(&mut g, &mut clock).unwrap();
        assert!(matches!(
            next_blocking(&mut g, &mut clock),
            Err(SnowflakeError::ClockStalled { .. })
        ));
    }
}
