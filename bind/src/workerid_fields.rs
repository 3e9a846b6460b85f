//! A worker-id holder's options and a Snowflake layout as flat lists of numbers, for hosts
//! that hand over arrays of integers (a JVM `long[]`, a C array) rather than named options.
//!
//! The order of each list is fixed here once ([`RESERVE`], [`TENURE`], [`LAYOUT`]); the
//! core's defaults come out in the same form, so a binding never restates a default, and a
//! list read back in gets the core's own checks and messages naming the field.

use shardline_core::workerid::snowflake::Layout;
use shardline_core::workerid::{Backoff, Policy, ReserveConfig, TenureConfig};

use crate::status::Failure;

/// Reserve options, in list order; a spread window of 0 means "lowest first".
pub const RESERVE: [&str; 5] = [
    "workerBits",
    "spreadWindow",
    "backoffBaseMs",
    "backoffMaxMs",
    "maxFailures",
];
/// Tenure options, in list order.
pub const TENURE: [&str; 5] = [
    "ttlMs",
    "renewEveryMs",
    "lookaheadMs",
    "marginMs",
    "driftPpm",
];
/// Layout fields, in list order.
pub const LAYOUT: [&str; 4] = ["timestampBits", "workerBits", "sequenceBits", "epochMs"];

/// `values` checked to have one number per name in `names`; `what` names the list.
fn fields<'a, const N: usize>(
    values: &'a [u64],
    names: &[&str; N],
    what: &str,
) -> Result<&'a [u64; N], Failure> {
    values.try_into().map_err(|_| {
        Failure::invalid_argument(format!(
            "{what}: expected {N} values ({}), got {}",
            names.join(", "),
            values.len()
        ))
    })
}

fn narrow<T: TryFrom<u64>>(v: u64, name: &str) -> Result<T, Failure> {
    T::try_from(v).map_err(|_| Failure::invalid_argument(format!("{name} out of range: {v}")))
}

/// Reserve options from their list (see [`RESERVE`]), checked.
pub fn reserve_config(values: &[u64]) -> Result<ReserveConfig, Failure> {
    let v = fields(values, &RESERVE, "reserve config")?;
    let config = ReserveConfig {
        worker_bits: narrow(v[0], RESERVE[0])?,
        policy: match v[1] {
            0 => Policy::Lowest,
            w => Policy::Spread {
                window: narrow(w, RESERVE[1])?,
            },
        },
        backoff: Backoff {
            base_ms: v[2],
            max_ms: v[3],
        },
        max_failures: narrow(v[4], RESERVE[4])?,
    };
    config.validate()?;
    Ok(config)
}

/// Tenure options from their list (see [`TENURE`]), checked.
pub fn tenure_config(values: &[u64]) -> Result<TenureConfig, Failure> {
    let v = fields(values, &TENURE, "tenure config")?;
    let config = TenureConfig {
        ttl_ms: v[0],
        renew_every_ms: v[1],
        lookahead_ms: v[2],
        margin_ms: v[3],
        drift_ppm: v[4],
    };
    config.validate()?;
    Ok(config)
}

/// A layout from its list (see [`LAYOUT`]), checked.
pub fn layout(values: &[u64]) -> Result<Layout, Failure> {
    let v = fields(values, &LAYOUT, "layout")?;
    Ok(Layout::new(
        narrow(v[0], LAYOUT[0])?,
        narrow(v[1], LAYOUT[1])?,
        narrow(v[2], LAYOUT[2])?,
        v[3],
    )?)
}

/// The core's default reserve options as a list.
pub fn default_reserve() -> [u64; 5] {
    let c = ReserveConfig::default();
    let window = match c.policy {
        Policy::Lowest => 0,
        Policy::Spread { window } => u64::from(window),
    };
    [
        u64::from(c.worker_bits),
        window,
        c.backoff.base_ms,
        c.backoff.max_ms,
        u64::from(c.max_failures),
    ]
}

/// The core's tenure options for a session TTL as a list.
pub fn default_tenure(ttl_ms: u64) -> [u64; 5] {
    let t = TenureConfig::for_ttl(ttl_ms);
    [
        t.ttl_ms,
        t.renew_every_ms,
        t.lookahead_ms,
        t.margin_ms,
        t.drift_ppm,
    ]
}

/// The core's default layout as a list.
pub fn default_layout() -> [u64; 4] {
    let l = Layout::default();
    [
        u64::from(l.timestamp_bits()),
        u64::from(l.worker_bits()),
        u64::from(l.sequence_bits()),
        l.epoch_ms(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::Status;

    #[test]
    fn defaults_read_back_as_the_core_defaults() {
        assert_eq!(
            reserve_config(&default_reserve()).unwrap(),
            ReserveConfig::default()
        );
        assert_eq!(
            tenure_config(&default_tenure(10_000)).unwrap(),
            TenureConfig::for_ttl(10_000)
        );
        assert_eq!(layout(&default_layout()).unwrap(), Layout::default());
    }

    #[test]
    fn bad_lists_name_what_is_wrong() {
        let e = layout(&[1, 2]).unwrap_err();
        assert_eq!(e.status, Status::InvalidArgument);
        assert!(e.message.contains("expected 4 values"), "{}", e.message);
        let mut r = default_reserve();
        r[0] = 300;
        assert!(reserve_config(&r)
            .unwrap_err()
            .message
            .contains("workerBits"));
        r[0] = 10;
        r[1] = 3;
        assert_eq!(
            reserve_config(&r).unwrap().policy,
            Policy::Spread { window: 3 }
        );
    }
}
