//! The binding-support layer: everything the C ABI and the Python, Node and JVM bindings
//! would otherwise each decide for themselves. A binding built on it only converts values
//! and speaks its language's idiom; the rules (which status a failure gets, how a host's
//! strategy answer is checked and explained) live here once, so every language gives the
//! same result for the same call.
//!
//! It is a crate of its own rather than a core module because none of it is placement logic:
//! the core stays the sans-IO decision engine the CLI and the simulator use, and this crate
//! only describes how a foreign host talks to it.

pub mod answers;
pub mod call_frames;
pub mod configuration;
pub mod driver_host;
pub mod etcd;
pub mod first_error;
pub mod flat_envelope;
pub mod handle;
pub mod host_defaults;
pub mod host_state;
pub mod host_value;
pub mod ids;
pub mod machine_init;
pub mod native;
pub mod objects;
pub mod ops;
pub mod pipeline_host;
pub mod rows;
pub mod status;
pub mod step_output;
pub mod strategy;
pub mod tree;
pub mod workerid_fields;

pub use handle::HandleCell;
pub use status::{Failure, Status};
pub use strategy::{CustomStrategy, StrategyHost};
