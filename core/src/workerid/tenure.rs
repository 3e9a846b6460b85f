//! Holding a reserved worker id (sans-IO): keep the session alive, keep a local deadline, keep
//! the timestamp budget ahead of the wall clock, and hand the id back.
//!
//! Timing (workerid-lease.md §4.2): a keep-alive sent at monotonic time `s` and acknowledged
//! with TTL `T` makes the claim valid locally until `s + T(1 - ρ) - m`. The server cannot end
//! the session before `T` after it applied the keep-alive, which was after `s`, so the holder
//! stops first. A failed keep-alive never extends the deadline; the deadline passes without
//! any event being needed.
//!
//! Budget (§4.3): the generator may stamp timestamps up to the fence's `hwm_ms`, raised ahead
//! of the wall clock by compare-and-set on the fence version, and only while our claim is the
//! live one. A new holder's acquisition changes that version, so the old holder's budget can
//! never grow again; the new holder only stamps above it.

use std::fmt;

use super::record::{Fence, Slot, Version};
use super::registry::{Registry, RegistryResult};
use super::reserver::Reservation;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TenureConfig {
    /// The session TTL asked of the registry; a larger TTL granted is not relied on.
    pub ttl_ms: u64,
    pub renew_every_ms: u64,
    /// How far ahead of the wall clock the budget is kept.
    pub lookahead_ms: u64,
    pub margin_ms: u64,
    /// Assumed bound on clock-rate error, parts per million.
    pub drift_ppm: u64,
}

impl Default for TenureConfig {
    fn default() -> Self {
        TenureConfig::for_ttl(10_000)
    }
}

impl TenureConfig {
    /// Renewal at a third of the TTL, so two more attempts fit after a failed one; budget two
    /// renewals ahead; 1% rate error and a tenth of the TTL (at most 1 s) of margin.
    pub fn for_ttl(ttl_ms: u64) -> TenureConfig {
        let renew_every_ms = (ttl_ms / 3).max(1);
        TenureConfig {
            ttl_ms,
            renew_every_ms,
            lookahead_ms: 2 * renew_every_ms,
            margin_ms: (ttl_ms / 10).min(1_000),
            drift_ppm: 10_000,
        }
    }

    pub fn validate(&self) -> crate::Result<()> {
        if self.renew_every_ms == 0 || 2 * self.renew_every_ms >= self.ttl_ms {
            return Err(crate::Error::invalid_argument(format!(
                "renewal every {} ms must be positive and under half the ttl ({} ms)",
                self.renew_every_ms, self.ttl_ms
            )));
        }
        if self.drift_ppm >= 1_000_000 || self.usable_ms(self.ttl_ms) <= self.renew_every_ms {
            return Err(crate::Error::invalid_argument(format!(
                "ttl {} ms leaves no time to renew after margin {} ms and drift {} ppm",
                self.ttl_ms, self.margin_ms, self.drift_ppm
            )));
        }
        if self.lookahead_ms == 0 {
            return Err(crate::Error::invalid_argument(
                "budget lookahead must be positive",
            ));
        }
        Ok(())
    }

    /// How much of a granted TTL the holder may use.
    fn usable_ms(&self, ttl_ms: u64) -> u64 {
        let ttl = ttl_ms.min(self.ttl_ms);
        ttl.saturating_sub(ttl.saturating_mul(self.drift_ppm) / 1_000_000 + self.margin_ms)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LossReason {
    /// The local deadline passed without a successful keep-alive.
    Expired,
    /// The registry says the session ended.
    SessionEnded,
    /// The claim is no longer ours, or another acquisition moved the fence.
    Fenced,
}

impl fmt::Display for LossReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            LossReason::Expired => "the reservation's local deadline passed",
            LossReason::SessionEnded => "the registry session ended",
            LossReason::Fenced => "the worker id was taken over",
        })
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TenureRequest {
    KeepAlive,
    /// Compare-and-set of our fence.
    SetFence {
        fence: Fence,
        expect: Version,
    },
    /// Read our slot back after a fence write with an unknown outcome.
    Read,
    Delete,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TenureStep {
    Send(TenureRequest),
    /// Nothing to do before the monotonic clock reads this.
    WaitUntil(u64),
    /// Stop using the id now. Reported on every poll from then on.
    Lost(LossReason),
    Released,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    Holding,
    Releasing { last_used_ms: Option<u64> },
    Lost(LossReason),
    Released,
}

#[derive(Debug, Clone)]
enum Pending {
    KeepAlive { sent_ms: u64 },
    SetFence { fence: Fence },
    Read,
    Delete,
}

#[derive(Debug, Clone)]
pub struct Tenure {
    config: TenureConfig,
    reservation: Reservation,
    /// `None` until the first keep-alive after the reservation is acknowledged.
    valid_until_ms: Option<u64>,
    /// Before the first acknowledgement, the claim cannot be trusted past this.
    confirm_by_ms: u64,
    next_renew_ms: u64,
    fence_unknown: bool,
    /// After a failed fence write or read, the next one waits until this.
    fence_retry_ms: u64,
    releasing_fence_done: bool,
    status: Status,
    pending: Option<Pending>,
}

impl Tenure {
    /// `now_ms`: monotonic time no earlier than when the create that won the reservation was
    /// sent.
    pub fn new(
        reservation: Reservation,
        config: TenureConfig,
        now_ms: u64,
    ) -> crate::Result<Tenure> {
        config.validate()?;
        Ok(Tenure {
            config,
            reservation,
            valid_until_ms: None,
            confirm_by_ms: now_ms + config.usable_ms(config.ttl_ms),
            next_renew_ms: now_ms,
            fence_unknown: false,
            fence_retry_ms: 0,
            releasing_fence_done: false,
            status: Status::Holding,
            pending: None,
        })
    }

    pub fn reservation(&self) -> &Reservation {
        &self.reservation
    }

    pub fn id(&self) -> u32 {
        self.reservation.id
    }

    /// Timestamps at or below this were available to earlier holders.
    pub fn floor_ms(&self) -> u64 {
        self.reservation.fence.floor_ms
    }

    /// Timestamps up to this are acknowledged for us.
    pub fn budget_ms(&self) -> u64 {
        self.reservation.fence.hwm_ms
    }

    pub fn valid_until_ms(&self) -> Option<u64> {
        self.valid_until_ms
    }

    /// Whether the id may be used at monotonic time `now_ms`.
    pub fn is_valid(&self, now_ms: u64) -> bool {
        self.status == Status::Holding && self.valid_until_ms.is_some_and(|v| now_ms < v)
    }

    pub fn loss(&self) -> Option<LossReason> {
        match self.status {
            Status::Lost(r) => Some(r),
            _ => None,
        }
    }

    /// Starts handing the id back. `last_used_ms`: the last timestamp the generator issued;
    /// the caller must have stopped the generator, since the budget above it is returned so
    /// the next holder need not wait for it.
    pub fn release(&mut self, last_used_ms: Option<u64>) {
        if self.status == Status::Holding {
            self.status = Status::Releasing { last_used_ms };
        }
    }

    /// What to do at monotonic `now_ms` and wall `wall_ms`.
    pub fn poll(&mut self, now_ms: u64, wall_ms: u64) -> TenureStep {
        if self.pending.is_some() {
            return TenureStep::WaitUntil(now_ms);
        }
        match self.status {
            Status::Lost(r) => return TenureStep::Lost(r),
            Status::Released => return TenureStep::Released,
            Status::Releasing { last_used_ms } => return self.poll_release(last_used_ms),
            Status::Holding => {}
        }
        let deadline = self.valid_until_ms.unwrap_or(self.confirm_by_ms);
        if now_ms >= deadline {
            return self.lose(LossReason::Expired);
        }
        if now_ms >= self.next_renew_ms {
            self.pending = Some(Pending::KeepAlive { sent_ms: now_ms });
            return TenureStep::Send(TenureRequest::KeepAlive);
        }
        let wake = self.next_renew_ms.min(deadline);
        if self.valid_until_ms.is_none() {
            return TenureStep::WaitUntil(wake);
        }
        if now_ms < self.fence_retry_ms {
            return TenureStep::WaitUntil(wake.min(self.fence_retry_ms));
        }
        if self.fence_unknown {
            self.pending = Some(Pending::Read);
            return TenureStep::Send(TenureRequest::Read);
        }
        let refresh_at_wall = self
            .budget_ms()
            .saturating_sub(self.config.lookahead_ms / 2);
        if wall_ms >= refresh_at_wall {
            let fence = Fence {
                hwm_ms: self.budget_ms().max(wall_ms + self.config.lookahead_ms),
                ..self.reservation.fence
            };
            self.pending = Some(Pending::SetFence { fence });
            return TenureStep::Send(TenureRequest::SetFence {
                fence,
                expect: self.reservation.fence_version,
            });
        }
        let refresh_at = now_ms + (refresh_at_wall - wall_ms);
        TenureStep::WaitUntil(wake.min(refresh_at))
    }

    fn poll_release(&mut self, last_used_ms: Option<u64>) -> TenureStep {
        let returned = last_used_ms.unwrap_or(0).max(self.floor_ms());
        if !self.releasing_fence_done && !self.fence_unknown && returned < self.budget_ms() {
            self.releasing_fence_done = true;
            let fence = Fence {
                hwm_ms: returned,
                ..self.reservation.fence
            };
            self.pending = Some(Pending::SetFence { fence });
            return TenureStep::Send(TenureRequest::SetFence {
                fence,
                expect: self.reservation.fence_version,
            });
        }
        self.pending = Some(Pending::Delete);
        TenureStep::Send(TenureRequest::Delete)
    }

    pub fn on_keep_alive(&mut self, reply: RegistryResult<Option<u64>>, now_ms: u64) {
        let Some(Pending::KeepAlive { sent_ms }) = self.pending.take() else {
            return;
        };
        match reply {
            Ok(Some(ttl_ms)) => {
                let until = sent_ms + self.config.usable_ms(ttl_ms);
                self.valid_until_ms = Some(self.valid_until_ms.map_or(until, |v| v.max(until)));
                self.next_renew_ms = sent_ms + self.config.renew_every_ms;
            }
            Ok(None) => {
                self.lose(LossReason::SessionEnded);
            }
            Err(_) => self.next_renew_ms = now_ms + self.retry_delay(),
        }
    }

    pub fn on_fence(&mut self, reply: RegistryResult<Option<Version>>, now_ms: u64) {
        let Some(Pending::SetFence { fence }) = self.pending.take() else {
            return;
        };
        match reply {
            Ok(Some(version)) => {
                self.reservation.fence = fence;
                self.reservation.fence_version = version;
            }
            Ok(None) => {
                if matches!(self.status, Status::Holding) {
                    self.lose(LossReason::Fenced);
                }
            }
            Err(_) => {
                self.fence_unknown = true;
                self.fence_retry_ms = now_ms + self.retry_delay();
            }
        }
    }

    /// Our slot as read back: the fence it holds is the acknowledged one, whichever write won.
    pub fn on_read(&mut self, reply: RegistryResult<Slot>, now_ms: u64) {
        let Some(Pending::Read) = self.pending.take() else {
            return;
        };
        match reply {
            Ok(slot) => {
                self.fence_unknown = false;
                match (slot.claim, slot.fence) {
                    (Some(c), Some((fence, version))) if c == self.reservation.claim => {
                        self.reservation.fence = fence;
                        self.reservation.fence_version = version;
                    }
                    _ => {
                        self.lose(LossReason::Fenced);
                    }
                }
            }
            Err(_) => self.fence_retry_ms = now_ms + self.retry_delay(),
        }
    }

    fn retry_delay(&self) -> u64 {
        (self.config.renew_every_ms / 4).max(1)
    }

    pub fn on_delete(&mut self, _reply: RegistryResult<bool>, _now_ms: u64) {
        if let Some(Pending::Delete) = self.pending.take() {
            // Deleted, already gone, or unknown: in every case the claim is no longer used by
            // us, and an undeleted one ends with the session.
            self.status = Status::Released;
        }
    }

    fn lose(&mut self, reason: LossReason) -> TenureStep {
        self.status = Status::Lost(reason);
        TenureStep::Lost(reason)
    }

    /// Carries out `request` on `registry` and feeds the answer back.
    pub fn perform(&mut self, request: &TenureRequest, registry: &mut dyn Registry, now_ms: u64) {
        let (id, claim) = (self.reservation.id, self.reservation.claim.clone());
        match request {
            TenureRequest::KeepAlive => {
                let r = registry.keep_alive();
                self.on_keep_alive(r, now_ms)
            }
            TenureRequest::SetFence { fence, expect } => {
                let r = registry.compare_and_set(id, &claim, fence, *expect);
                self.on_fence(r, now_ms)
            }
            TenureRequest::Read => {
                let r = registry.read(id);
                self.on_read(r, now_ms)
            }
            TenureRequest::Delete => {
                let r = registry.delete(id, &claim);
                self.on_delete(r, now_ms)
            }
        }
    }
}
