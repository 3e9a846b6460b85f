//! The strategies the benchmarks compare, with the parameters each is usually run with;
//! shared by `strategies.rs` (times) and `counts.rs` (instruction counts).

use shardline_core::strategy::StrategyConfig;

/// Every strategy at its usual parameters.
pub fn strategies() -> Vec<StrategyConfig> {
    vec![
        // Pekko's usual configuration of the new algorithm.
        StrategyConfig::LeastShard {
            absolute_limit: 20,
            relative_limit: 0.1,
            tie_break_by_age: false,
            phase1_from_most_loaded: false,
        },
        // Pekko's default (legacy) strategy with its defaults.
        StrategyConfig::LeastShardLegacy {
            rebalance_threshold: 1,
            max_simultaneous_rebalance: 3,
            tie_break_by_age: false,
        },
        StrategyConfig::ConsistentHashing {
            rebalance_limit: 10,
            virtual_nodes_factor: 10,
        },
        StrategyConfig::ActorTsHash,
        StrategyConfig::ActorTsLeastShard {
            rebalance_threshold: 1,
            max_simultaneous_rebalance: 3,
        },
        // shardline's own, with its defaults.
        StrategyConfig::BoundedLoadHashing {
            epsilon: 0.25,
            absolute_limit: 20,
            relative_limit: 0.1,
            virtual_nodes_factor: 100,
        },
    ]
}
