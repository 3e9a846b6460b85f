//! Blocking convenience over the sans-IO pieces, for hosts with a real registry client and a
//! real clock (the CLI, the etcd tests): reserve, hold, issue Snowflake ids, release.
//! Everything that waits goes through the host's [`Clock`].

use std::fmt;

use super::record::Identity;
use super::registry::Registry;
use super::reserver::{Reservation, ReserveConfig, ReserveError, Reserver, Step};
use super::tenure::{LossReason, Tenure, TenureConfig, TenureStep};
use crate::workerid::snowflake::{Clock, Layout, Next, Snowflake, SnowflakeError};

/// Runs `reserver` against `registry` until it reserves an id or gives up.
/// `lookahead_ms`: how far ahead of its clock a holder fences its budget
/// ([`TenureConfig::lookahead_ms`]); ids fenced no further ahead of this host's clock are tried
/// first.
pub fn reserve(
    registry: &mut dyn Registry,
    reserver: &mut Reserver,
    lookahead_ms: u64,
    clock: &mut dyn Clock,
) -> Result<Reservation, ReserveError> {
    let mut step = reserver.start(clock.wall_ms().saturating_add(lookahead_ms));
    loop {
        step = match step {
            Step::Send(request) => {
                let reply = request.perform(registry);
                reserver.on_reply(reply, clock.monotonic_ms())
            }
            Step::WaitUntil(until) => {
                clock.sleep_until(until);
                reserver.wake(clock.monotonic_ms())
            }
            Step::Reserved(r) => return Ok(r),
            Step::Failed(e) => return Err(e),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HoldError {
    Config(crate::Error),
    Reserve(ReserveError),
    Lost(LossReason),
    Snowflake(SnowflakeError),
}

impl fmt::Display for HoldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HoldError::Config(e) => e.fmt(f),
            HoldError::Reserve(e) => e.fmt(f),
            HoldError::Lost(r) => write!(f, "worker id lost: {r}"),
            HoldError::Snowflake(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for HoldError {}

impl From<crate::Error> for HoldError {
    fn from(e: crate::Error) -> Self {
        HoldError::Config(e)
    }
}

/// Budget refreshes one id may wait for before the registry is declared unreachable.
const MAX_STALLS_PER_ID: u32 = 64;

/// A held worker id with its Snowflake generator.
pub struct WorkerIdHolder<R: Registry> {
    registry: R,
    tenure: Tenure,
    generator: Snowflake,
    /// Monotonic time of the next upkeep; checking it is all the id path does.
    upkeep_at_ms: u64,
}

impl<R: Registry> WorkerIdHolder<R> {
    /// Reserves an id and confirms it (first keep-alive and budget) before returning.
    pub fn acquire(
        mut registry: R,
        reserve_config: ReserveConfig,
        tenure_config: TenureConfig,
        layout: Layout,
        me: Identity,
        seed: u64,
        clock: &mut dyn Clock,
    ) -> Result<WorkerIdHolder<R>, HoldError> {
        if u32::from(layout.worker_bits()) < u32::from(reserve_config.worker_bits) {
            return Err(HoldError::Config(crate::Error::invalid_argument(format!(
                "{} worker-id bits do not fit the {}-bit worker field of the id layout",
                reserve_config.worker_bits,
                layout.worker_bits()
            ))));
        }
        let mut reserver = Reserver::new(reserve_config, me, seed)?;
        let started = clock.monotonic_ms();
        let reservation = reserve(
            &mut registry,
            &mut reserver,
            tenure_config.lookahead_ms,
            clock,
        )
        .map_err(HoldError::Reserve)?;
        WorkerIdHolder::hold(registry, reservation, tenure_config, layout, started, clock)
    }

    /// Holds a reservation made elsewhere. `reserved_at_ms`: monotonic time no later than
    /// when its create was sent.
    pub fn hold(
        registry: R,
        reservation: Reservation,
        tenure_config: TenureConfig,
        layout: Layout,
        reserved_at_ms: u64,
        clock: &mut dyn Clock,
    ) -> Result<WorkerIdHolder<R>, HoldError> {
        let floor = reservation.fence.floor_ms;
        let generator = Snowflake::fenced(layout, u64::from(reservation.id), Some(floor))?;
        let tenure = Tenure::new(reservation, tenure_config, reserved_at_ms)?;
        let mut holder = WorkerIdHolder {
            registry,
            tenure,
            generator,
            upkeep_at_ms: 0,
        };
        holder.maintain(clock).map_err(HoldError::Lost)?;
        Ok(holder)
    }

    pub fn worker_id(&self) -> u32 {
        self.tenure.id()
    }

    pub fn epoch(&self) -> u64 {
        self.tenure.reservation().epoch()
    }

    pub fn tenure(&self) -> &Tenure {
        &self.tenure
    }

    pub fn generator(&self) -> &Snowflake {
        &self.generator
    }

    pub fn registry(&mut self) -> &mut R {
        &mut self.registry
    }

    /// Does whatever upkeep is due; returns the monotonic time of the next.
    pub fn maintain(&mut self, clock: &mut dyn Clock) -> Result<u64, LossReason> {
        loop {
            let now = clock.monotonic_ms();
            match self.tenure.poll(now, clock.wall_ms()) {
                TenureStep::Send(request) => {
                    self.tenure.perform(&request, &mut self.registry, now);
                    self.generator.extend_budget(self.tenure.budget_ms());
                }
                TenureStep::WaitUntil(at) => {
                    self.upkeep_at_ms = at;
                    return Ok(at);
                }
                TenureStep::Lost(reason) => {
                    self.generator.revoke();
                    return Err(reason);
                }
                TenureStep::Released => {
                    self.generator.revoke();
                    return Err(LossReason::SessionEnded);
                }
            }
        }
    }

    /// Keeps the id alive until the monotonic clock reads `until_ms`.
    pub fn hold_until(&mut self, clock: &mut dyn Clock, until_ms: u64) -> Result<(), LossReason> {
        loop {
            let next = self.maintain(clock)?;
            if clock.monotonic_ms() >= until_ms {
                return Ok(());
            }
            clock.sleep_until(next.min(until_ms));
        }
    }

    /// The next Snowflake id, waiting on `clock` when the generator asks to.
    pub fn next_id(&mut self, clock: &mut dyn Clock) -> Result<u64, HoldError> {
        for _ in 0..MAX_STALLS_PER_ID {
            let now = clock.monotonic_ms();
            if now >= self.upkeep_at_ms {
                self.maintain(clock).map_err(HoldError::Lost)?;
            }
            if !self.tenure.is_valid(now) {
                self.generator.revoke();
                return Err(HoldError::Lost(LossReason::Expired));
            }
            let wall = clock.wall_ms();
            match self.generator.next(wall) {
                Ok(Next::Id(id)) => return Ok(id),
                Ok(Next::WaitUntil(at)) => clock.sleep_until(now + at.saturating_sub(wall)),
                Err(SnowflakeError::BudgetExhausted { .. }) => {
                    // The tenure refreshes a budget this close to its end on its next poll.
                    self.upkeep_at_ms = now;
                    let next = self.maintain(clock).map_err(HoldError::Lost)?;
                    if self.generator.budget_ms().is_some_and(|b| b < wall) {
                        clock.sleep_until(next);
                    }
                }
                Err(e) => return Err(HoldError::Snowflake(e)),
            }
        }
        Err(HoldError::Snowflake(SnowflakeError::BudgetExhausted {
            budget_ms: self.tenure.budget_ms(),
        }))
    }

    /// Stops the generator, returns its unused budget and deletes the claim.
    pub fn release(mut self, clock: &mut dyn Clock) -> R {
        let last = self.generator.last_timestamp_ms();
        self.generator.revoke();
        self.tenure.release(last);
        loop {
            let now = clock.monotonic_ms();
            match self.tenure.poll(now, clock.wall_ms()) {
                TenureStep::Send(request) => self.tenure.perform(&request, &mut self.registry, now),
                _ => break,
            }
        }
        self.registry
    }
}
