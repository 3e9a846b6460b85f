//! Worker ids as every binding exposes them: which status a holder's failure reports, and
//! the one rule for a host's id clock that fails.
//!
//! The clock rule: a reading the host cannot give fails the call that needed it (the binding
//! reports the host's failure when the call returns, and drops whatever the call produced),
//! and meanwhile the core sees the last good reading (the monotonic one never goes back). A
//! wait the host cannot perform counts as done: the monotonic reading moves up to its end,
//! so every loop of the holder that waits for time to pass still ends. No reading is made up
//! beyond what the core asked to wait for.

use serde::Deserialize;
use shardline_core::workerid::snowflake::{Clock, Layout, Next, Snowflake};
use shardline_core::workerid::{
    HoldError, Identity, Policy, Registry, ReserveConfig, ReserveError, TenureConfig,
    WorkerIdHolder,
};

use crate::objects::LayoutSpec;
use crate::status::{Failure, Status};

/// One worker's Snowflake generator as every binding holds it: the core's, and the wall time
/// its last `next` said to ask again at.
pub struct Generator {
    pub snowflake: Snowflake,
    pub wait_until_ms: Option<u64>,
}

impl Generator {
    /// Unfenced (a worker id made unique by configuration: no floor, unlimited budget) unless
    /// `fenced`; a fenced one issues only above `floor_ms` and nothing before a budget.
    pub fn new(
        layout: Layout,
        worker: u64,
        fenced: bool,
        floor_ms: Option<u64>,
    ) -> Result<Generator, Failure> {
        let snowflake = if fenced {
            Snowflake::fenced(layout, worker, floor_ms)?
        } else {
            Snowflake::new(layout, worker)?
        };
        Ok(Generator {
            snowflake,
            wait_until_ms: None,
        })
    }

    /// The next id at wall time `wall_ms`, or `None`: ask again at `wait_until_ms`.
    pub fn next(&mut self, wall_ms: u64) -> Result<Option<u64>, Failure> {
        let next = self
            .snowflake
            .next(wall_ms)
            .map_err(shardline_core::Error::from)?;
        Ok(match next {
            Next::Id(id) => {
                self.wait_until_ms = None;
                Some(id)
            }
            Next::WaitUntil(at) => {
                self.wait_until_ms = Some(at);
                None
            }
        })
    }
}

/// The status and message of a worker-id holder's failure: a full pool is NO_CANDIDATES (no
/// id can be had, as no region can take a shard), a bad configuration keeps its own kind, and
/// everything else (registry down, id lost, clock stuck) is INVALID_STATE.
pub fn hold_failure(e: HoldError) -> Failure {
    match e {
        HoldError::Config(e) => e.into(),
        HoldError::Reserve(r @ ReserveError::Exhausted { .. }) => {
            Failure::new(Status::NoCandidates, r.to_string())
        }
        other => Failure::invalid_state(other.to_string()),
    }
}

/// The id-picking policy from its text form: "lowest", or "spread:N" (pick at random among
/// the lowest N free ids). `what` names the option in the message.
pub fn policy(text: &str, what: &str) -> Result<Policy, Failure> {
    match text.split_once(':') {
        None if text == "lowest" => Ok(Policy::Lowest),
        Some(("spread", n)) => n
            .parse()
            .map(|window| Policy::Spread { window })
            .map_err(|_| Failure::invalid_argument(format!("{what} {text:?}: N must be a number"))),
        _ => Err(Failure::invalid_argument(format!(
            "{what} must be \"lowest\" or \"spread:N\", got {text:?}"
        ))),
    }
}

/// A worker-id holder's options as named ones: `{owner, incarnation, ttlMs = 10000,
/// workerBits = 10, layout?, policy = "lowest", seed = 0}`. Other keys are left alone: a
/// host's options object carries its clock beside them.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HolderInit {
    pub owner: String,
    pub incarnation: u64,
    #[serde(default = "default_ttl")]
    pub ttl_ms: u64,
    pub worker_bits: Option<u8>,
    pub layout: Option<LayoutSpec>,
    pub policy: Option<String>,
    #[serde(default)]
    pub seed: u64,
}

fn default_ttl() -> u64 {
    10_000
}

impl HolderInit {
    /// The options, checked, and the registry session's time-to-live.
    pub fn options(self) -> Result<(HolderOptions, u64), Failure> {
        let mut reserve = ReserveConfig::default();
        if let Some(bits) = self.worker_bits {
            reserve.worker_bits = bits;
        }
        if let Some(p) = self.policy {
            reserve.policy = policy(&p, "policy")?;
        }
        let options = HolderOptions {
            identity: Identity {
                owner: self.owner,
                incarnation: self.incarnation,
            },
            reserve,
            tenure: TenureConfig::for_ttl(self.ttl_ms),
            layout: self.layout.unwrap_or_default().build()?,
            seed: self.seed,
        };
        Ok((options, self.ttl_ms))
    }
}

/// How a binding asks for a worker id.
pub struct HolderOptions {
    pub identity: Identity,
    pub reserve: ReserveConfig,
    pub tenure: TenureConfig,
    pub layout: Layout,
    pub seed: u64,
}

/// A reserved worker id and the clock it is kept on, as every binding holds one: calls after
/// `release` fail with INVALID_STATE, failures get the shared statuses.
pub struct Held<R: Registry, H> {
    holder: Option<WorkerIdHolder<R>>,
    clock: IdClock<H>,
}

fn lost(r: impl std::fmt::Display) -> Failure {
    Failure::invalid_state(format!("worker id lost: {r}"))
}

impl<R: Registry, H: HostClock> Held<R, H> {
    /// Reserves an id in `session` and confirms it before returning.
    pub fn acquire(session: R, options: HolderOptions, clock: H) -> Result<Self, Failure> {
        let mut clock = IdClock::new(clock);
        let holder = WorkerIdHolder::acquire(
            session,
            options.reserve,
            options.tenure,
            options.layout,
            options.identity,
            options.seed,
            &mut clock,
        )
        .map_err(hold_failure)?;
        Ok(Held {
            holder: Some(holder),
            clock,
        })
    }

    /// The holder, for its read-only properties (worker id, epoch, tenure, layout).
    pub fn holder(&self) -> Result<&WorkerIdHolder<R>, Failure> {
        self.holder
            .as_ref()
            .ok_or_else(|| Failure::invalid_state("the worker id was released"))
    }

    fn parts(&mut self) -> Result<(&mut WorkerIdHolder<R>, &mut IdClock<H>), Failure> {
        match &mut self.holder {
            Some(h) => Ok((h, &mut self.clock)),
            None => Err(Failure::invalid_state("the worker id was released")),
        }
    }

    /// The next Snowflake id, keeping the reservation alive as needed.
    pub fn next_id(&mut self) -> Result<u64, Failure> {
        let (h, c) = self.parts()?;
        h.next_id(c).map_err(hold_failure)
    }

    /// Does the upkeep that is due; returns the monotonic time of the next.
    pub fn maintain(&mut self) -> Result<u64, Failure> {
        let (h, c) = self.parts()?;
        h.maintain(c).map_err(lost)
    }

    /// Keeps the id alive until the monotonic clock reads `until_ms`.
    pub fn hold_until(&mut self, until_ms: u64) -> Result<(), Failure> {
        let (h, c) = self.parts()?;
        h.hold_until(c, until_ms).map_err(lost)
    }

    /// Hands the id back (the unused budget, the claim) and returns the registry session, or
    /// `None` when it was released already; idempotent.
    pub fn release(&mut self) -> Option<R> {
        let h = self.holder.take()?;
        Some(h.release(&mut self.clock))
    }
}

/// A host's clock (a simulation's, a test's); each method may fail.
pub trait HostClock {
    fn wall_ms(&mut self) -> Result<u64, Failure>;
    fn monotonic_ms(&mut self) -> Result<u64, Failure>;
    fn sleep_until(&mut self, monotonic_ms: u64) -> Result<(), Failure>;
    /// Keeps `failure` for the binding's caller (the first one of a call wins).
    fn keep(&mut self, failure: Failure);
}

/// A binding that picks its clock at run time (the host's or the system's) keeps it boxed.
impl<H: HostClock + ?Sized> HostClock for Box<H> {
    fn wall_ms(&mut self) -> Result<u64, Failure> {
        (**self).wall_ms()
    }
    fn monotonic_ms(&mut self) -> Result<u64, Failure> {
        (**self).monotonic_ms()
    }
    fn sleep_until(&mut self, monotonic_ms: u64) -> Result<(), Failure> {
        (**self).sleep_until(monotonic_ms)
    }
    fn keep(&mut self, failure: Failure) {
        (**self).keep(failure)
    }
}

/// The clock the core's holder runs on, applying the failing-clock rule to a host's clock.
pub struct IdClock<H> {
    host: H,
    wall: u64,
    mono: u64,
}

impl<H: HostClock> IdClock<H> {
    pub fn new(host: H) -> Self {
        IdClock {
            host,
            wall: 0,
            mono: 0,
        }
    }

    pub fn host_mut(&mut self) -> &mut H {
        &mut self.host
    }
}

impl<H: HostClock> Clock for IdClock<H> {
    fn wall_ms(&mut self) -> u64 {
        // The wall clock may step back; the generator, not this rule, decides what that means.
        match self.host.wall_ms() {
            Ok(t) => self.wall = t,
            Err(f) => self.host.keep(f),
        }
        self.wall
    }

    fn monotonic_ms(&mut self) -> u64 {
        match self.host.monotonic_ms() {
            Ok(t) => self.mono = self.mono.max(t),
            Err(f) => self.host.keep(f),
        }
        self.mono
    }

    fn sleep_until(&mut self, monotonic_ms: u64) {
        if let Err(f) = self.host.sleep_until(monotonic_ms) {
            self.host.keep(f);
            self.mono = self.mono.max(monotonic_ms);
        }
    }
}

/// The machine's own clocks, for hosts that give none: the wall clock since the Unix epoch
/// and a monotonic clock since the holder was made; waits block the calling thread.
pub struct SystemClock(std::time::Instant);

impl Default for SystemClock {
    fn default() -> Self {
        SystemClock(std::time::Instant::now())
    }
}

impl HostClock for SystemClock {
    fn wall_ms(&mut self) -> Result<u64, Failure> {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .map_err(|e| Failure::internal(format!("the system clock is before 1970: {e}")))
    }

    fn monotonic_ms(&mut self) -> Result<u64, Failure> {
        Ok(self.0.elapsed().as_millis() as u64)
    }

    fn sleep_until(&mut self, monotonic_ms: u64) -> Result<(), Failure> {
        let now = self.0.elapsed().as_millis() as u64;
        std::thread::sleep(std::time::Duration::from_millis(
            monotonic_ms.saturating_sub(now),
        ));
        Ok(())
    }

    fn keep(&mut self, _: Failure) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads the scripted values; `None` is a failure.
    struct Scripted {
        mono: Vec<Option<u64>>,
        sleeps_fail: bool,
        kept: Vec<Failure>,
    }

    impl HostClock for Scripted {
        fn wall_ms(&mut self) -> Result<u64, Failure> {
            Err(Failure::callback_failed("wall broke"))
        }
        fn monotonic_ms(&mut self) -> Result<u64, Failure> {
            self.mono
                .remove(0)
                .ok_or_else(|| Failure::callback_failed("mono broke"))
        }
        fn sleep_until(&mut self, _: u64) -> Result<(), Failure> {
            if self.sleeps_fail {
                Err(Failure::callback_failed("cannot sleep"))
            } else {
                Ok(())
            }
        }
        fn keep(&mut self, f: Failure) {
            self.kept.push(f);
        }
    }

    #[test]
    fn a_failing_clock_keeps_its_last_reading_and_ends_waits() {
        let mut c = IdClock::new(Scripted {
            mono: vec![Some(10), None, Some(5), None],
            sleeps_fail: true,
            kept: Vec::new(),
        });
        assert_eq!(c.monotonic_ms(), 10);
        assert_eq!(
            c.monotonic_ms(),
            10,
            "a failed reading is the last good one"
        );
        assert_eq!(c.monotonic_ms(), 10, "never back");
        c.sleep_until(40);
        assert_eq!(c.monotonic_ms(), 40, "a wait that failed counts as done");
        assert_eq!(c.wall_ms(), 0);
        let kept: Vec<_> = c.host_mut().kept.iter().map(|f| &*f.message).collect();
        assert_eq!(
            kept,
            ["mono broke", "cannot sleep", "mono broke", "wall broke"]
        );
    }

    #[test]
    fn a_full_pool_is_no_candidates() {
        let f = hold_failure(HoldError::Reserve(ReserveError::Exhausted { total: 4 }));
        assert_eq!(f.status, Status::NoCandidates);
        let f = hold_failure(HoldError::Config(shardline_core::Error::invalid_argument(
            "x",
        )));
        assert_eq!(f.status, Status::InvalidArgument);
    }
}
