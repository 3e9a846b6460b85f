//! Strategy configuration as data (JSON in the CLI, dicts in Python, objects in Node): the
//! `strategy` object of the conformance vectors, plus newer-Akka options and defaults.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{
    ActorTsHash, ActorTsLeastShard, AkkaOptions, AllocationStrategy, BoundedLoadHashing,
    ConsistentHashing, External, LeastLoad, LeastShard, LeastShardLegacy,
};
use crate::model::Address;
use crate::model::Amount;
use crate::{Error, Result};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum StrategyConfig {
    #[serde(rename_all = "camelCase")]
    LeastShard {
        #[serde(default = "default_absolute_limit")]
        absolute_limit: i32,
        #[serde(default = "default_relative_limit")]
        relative_limit: f64,
        /// Akka >= 2.9.4 tie-break by member age then address.
        #[serde(default)]
        tie_break_by_age: bool,
        /// Akka >= 2.10.19 phase 1 from the most loaded region.
        #[serde(default)]
        phase1_from_most_loaded: bool,
    },
    /// Least-shard over loads and capacities (see `least_load`); least-shard's parameters,
    /// plus the band above the fluid optimum and a load budget per round.
    #[serde(rename_all = "camelCase")]
    LeastLoad {
        #[serde(default = "default_absolute_limit")]
        absolute_limit: i32,
        #[serde(default = "default_relative_limit")]
        relative_limit: f64,
        #[serde(default)]
        tie_break_by_age: bool,
        #[serde(default)]
        phase1_from_most_loaded: bool,
        #[serde(default = "default_band")]
        band: f64,
        /// Load moved per round: a number, or a number per dimension.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_load_moved: Option<Amount>,
    },
    #[serde(rename_all = "camelCase")]
    LeastShardLegacy {
        #[serde(default = "one")]
        rebalance_threshold: i32,
        #[serde(default = "three")]
        max_simultaneous_rebalance: i32,
        #[serde(default)]
        tie_break_by_age: bool,
    },
    #[serde(rename_all = "camelCase")]
    ConsistentHashing {
        #[serde(default = "ten")]
        rebalance_limit: i32,
        #[serde(default = "ten_u")]
        virtual_nodes_factor: u32,
    },
    /// Consistent hashing with bounded loads: shards keep to their hash position (as with
    /// consistent-hashing) while no region holds more than `1 + epsilon` times the mean.
    #[serde(rename_all = "camelCase")]
    BoundedLoadHashing {
        #[serde(default = "default_epsilon")]
        epsilon: f64,
        #[serde(default = "default_absolute_limit")]
        absolute_limit: i32,
        #[serde(default = "default_relative_limit")]
        relative_limit: f64,
        #[serde(default = "hundred_u")]
        virtual_nodes_factor: u32,
    },
    #[serde(rename_all = "camelCase")]
    External {
        #[serde(default)]
        locations: BTreeMap<String, String>,
        /// "timeout" simulates a location source that never answers.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        lookup: Option<String>,
    },
    ActorTsHash,
    #[serde(rename_all = "camelCase")]
    ActorTsLeastShard {
        #[serde(default = "one_i64")]
        rebalance_threshold: i64,
        #[serde(default = "three_i64")]
        max_simultaneous_rebalance: i64,
    },
}

fn default_absolute_limit() -> i32 {
    20
}
fn default_relative_limit() -> f64 {
    0.1
}
fn default_band() -> f64 {
    super::DEFAULT_BAND
}
fn one() -> i32 {
    1
}
fn three() -> i32 {
    3
}
fn ten() -> i32 {
    10
}
fn ten_u() -> u32 {
    10
}
fn default_epsilon() -> f64 {
    0.25
}
fn hundred_u() -> u32 {
    100
}
fn one_i64() -> i64 {
    1
}
fn three_i64() -> i64 {
    3
}

impl StrategyConfig {
    /// Parses a strategy object such as `{"kind": "least-shard", "absoluteLimit": 10}`.
    pub fn from_json(value: &serde_json::Value) -> Result<StrategyConfig> {
        StrategyConfig::deserialize(value)
            .map_err(|e| Error::invalid_argument(format!("strategy: {e}")))
    }

    pub fn kind(&self) -> &'static str {
        match self {
            StrategyConfig::LeastShard { .. } => "least-shard",
            StrategyConfig::LeastLoad { .. } => "least-load",
            StrategyConfig::LeastShardLegacy { .. } => "least-shard-legacy",
            StrategyConfig::ConsistentHashing { .. } => "consistent-hashing",
            StrategyConfig::BoundedLoadHashing { .. } => "bounded-load-hashing",
            StrategyConfig::External { .. } => "external",
            StrategyConfig::ActorTsHash => "actor-ts-hash",
            StrategyConfig::ActorTsLeastShard { .. } => "actor-ts-least-shard",
        }
    }

    /// Validates the parameters and builds the strategy.
    pub fn build(&self) -> Result<Box<dyn AllocationStrategy>> {
        let ctx = |e: Error| e.context(format!("strategy {}", self.kind()));
        Ok(match self {
            StrategyConfig::LeastShard {
                absolute_limit,
                relative_limit,
                tie_break_by_age,
                phase1_from_most_loaded,
            } => Box::new(
                LeastShard::new(*absolute_limit, *relative_limit)
                    .map_err(ctx)?
                    .with_akka_options(AkkaOptions {
                        tie_break_by_age: *tie_break_by_age,
                        phase1_from_most_loaded: *phase1_from_most_loaded,
                    }),
            ),
            StrategyConfig::LeastLoad {
                absolute_limit,
                relative_limit,
                tie_break_by_age,
                phase1_from_most_loaded,
                band,
                max_load_moved,
            } => Box::new(
                LeastLoad::new(
                    *absolute_limit,
                    *relative_limit,
                    *band,
                    max_load_moved.clone(),
                )
                .map_err(ctx)?
                .with_akka_options(AkkaOptions {
                    tie_break_by_age: *tie_break_by_age,
                    phase1_from_most_loaded: *phase1_from_most_loaded,
                }),
            ),
            StrategyConfig::LeastShardLegacy {
                rebalance_threshold,
                max_simultaneous_rebalance,
                tie_break_by_age,
            } => Box::new(
                LeastShardLegacy::new(*rebalance_threshold, *max_simultaneous_rebalance)
                    .map_err(ctx)?
                    .with_akka_options(AkkaOptions {
                        tie_break_by_age: *tie_break_by_age,
                        ..Default::default()
                    }),
            ),
            StrategyConfig::ConsistentHashing {
                rebalance_limit,
                virtual_nodes_factor,
            } => Box::new(
                ConsistentHashing::new(*rebalance_limit, *virtual_nodes_factor).map_err(ctx)?,
            ),
            StrategyConfig::BoundedLoadHashing {
                epsilon,
                absolute_limit,
                relative_limit,
                virtual_nodes_factor,
            } => Box::new(
                BoundedLoadHashing::new(
                    *epsilon,
                    *absolute_limit,
                    *relative_limit,
                    *virtual_nodes_factor,
                )
                .map_err(ctx)?,
            ),
            StrategyConfig::External { locations, lookup } => match lookup.as_deref() {
                Some("timeout") => Box::new(External::unavailable()),
                Some(other) => {
                    return Err(ctx(Error::invalid_argument(format!(
                        "lookup: expected \"timeout\" or no lookup, got {other:?}"
                    ))))
                }
                None => {
                    let mut ext = External::in_memory();
                    for (shard, node) in locations {
                        let node = Address::parse(node)
                            .map_err(|e| ctx(e.context(format!("locations.{shard}"))))?;
                        ext.set_location(shard, node);
                    }
                    Box::new(ext)
                }
            },
            StrategyConfig::ActorTsHash => Box::new(ActorTsHash::new()),
            StrategyConfig::ActorTsLeastShard {
                rebalance_threshold,
                max_simultaneous_rebalance,
            } => Box::new(
                ActorTsLeastShard::new(*rebalance_threshold, *max_simultaneous_rebalance)
                    .map_err(ctx)?,
            ),
        })
    }
}
