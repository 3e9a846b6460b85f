//! The Node binding of shardline (npm package `shardline`).
//!
//! Everything runs synchronously on the JavaScript thread that calls in: the core never
//! spawns threads or timers, and callbacks into JavaScript happen during the call that
//! triggers them, so no handle keeps the event loop alive.

mod backends;
mod conv;
mod coordinator;
mod envelope;
mod error;
mod etcd;
mod handle;
mod host;
mod ids;
mod js;
mod ops;
mod pipeline;
mod proto;
mod region;
mod state;
mod strategy;

use napi_derive::napi;

/// `shardline/<version>` of the native library.
#[napi]
pub const VERSION: &str = shardline_core::VERSION;
