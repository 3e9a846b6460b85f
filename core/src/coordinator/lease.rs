//! The coordinator's side of the lease contract (`crate::host::Lease`): the grant it acts
//! under and the at-most-once loss report, whatever the backend does.

use serde::{Deserialize, Serialize};

use crate::protocol::FencingToken;
use crate::{Error, Result};

/// A lease the coordinator was granted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "model-check", derive(Hash))]
pub struct LeaseGrant {
    pub token: FencingToken,
    /// Local monotonic deadline: stop acting at this instant even if nobody says so.
    pub valid_until_ms: u64,
}

/// The holder's side of the contract: the current grant, its deadline, and the at-most-once
/// loss report.
#[derive(Debug, Clone, Default)]
#[cfg_attr(feature = "model-check", derive(Hash))]
pub(crate) struct LeaseHolder {
    grant: Option<LeaseGrant>,
    /// Tokens that were granted and have since been reported lost (only the latest matters:
    /// tokens grow, so anything at or below it is stale).
    lost_up_to: Option<FencingToken>,
}

impl LeaseHolder {
    pub fn grant(&self) -> Option<LeaseGrant> {
        self.grant
    }

    pub fn token(&self) -> Option<FencingToken> {
        self.grant.map(|g| g.token)
    }

    /// Records a grant. Refused if the token does not exceed every token seen before: a
    /// backend that re-issues an old token would break fencing.
    pub fn granted(&mut self, grant: LeaseGrant) -> Result<()> {
        let floor = self.grant.map(|g| g.token).max(self.lost_up_to);
        if let Some(f) = floor {
            if grant.token <= f {
                return Err(Error::invalid_state(format!(
                    "lease granted token {} which does not exceed {}",
                    grant.token, f
                )));
            }
        }
        self.grant = Some(grant);
        Ok(())
    }

    /// Applies a successful renewal of `token`; ignored for any other grant.
    pub fn renewed(&mut self, token: FencingToken, valid_until_ms: u64) -> bool {
        match &mut self.grant {
            Some(g) if g.token == token => {
                g.valid_until_ms = g.valid_until_ms.max(valid_until_ms);
                true
            }
            _ => false,
        }
    }

    pub fn is_valid(&self, now_ms: u64) -> bool {
        self.grant.is_some_and(|g| now_ms < g.valid_until_ms)
    }

    pub fn valid_until(&self) -> Option<u64> {
        self.grant.map(|g| g.valid_until_ms)
    }

    /// Ends the current grant if it is `token` (or any grant, for `None`). Returns the token
    /// the first time only, so a caller reacts to a loss once per grant.
    pub fn lose(&mut self, token: Option<FencingToken>) -> Option<FencingToken> {
        let g = self.grant?;
        if token.is_some_and(|t| t != g.token) {
            return None;
        }
        self.grant = None;
        self.lost_up_to = Some(g.token);
        Some(g.token)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holder_reports_loss_once_per_grant_and_refuses_old_tokens() {
        let mut h = LeaseHolder::default();
        let g = LeaseGrant {
            token: FencingToken(3),
            valid_until_ms: 100,
        };
        h.granted(g).unwrap();
        assert!(h.is_valid(99));
        assert!(
            !h.is_valid(100),
            "the local deadline expires without any event"
        );
        assert!(!h.renewed(FencingToken(2), 500), "renewal of another grant");
        assert_eq!(h.lose(Some(FencingToken(2))), None, "loss of another grant");
        assert_eq!(h.lose(None), Some(FencingToken(3)));
        assert_eq!(h.lose(None), None, "at most once");
        assert!(
            h.granted(g).is_err(),
            "a token that does not grow is refused"
        );
        h.granted(LeaseGrant {
            token: FencingToken(4),
            valid_until_ms: 200,
        })
        .unwrap();
        assert_eq!(h.lose(Some(FencingToken(4))), Some(FencingToken(4)));
    }
}
