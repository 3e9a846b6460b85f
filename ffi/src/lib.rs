//! The stable C ABI of shardline: `libshardline` plus `include/shardline.h`.
//!
//! One module per C type (rustls-ffi style). Every export runs inside [`boundary::guard`] (or
//! [`boundary::infallible`]) so that panics and bad pointers become status codes, and handles
//! are plain Rust structs that cbindgen renders as opaque C structs. The header's overview, in
//! `cbindgen.toml`, states the conventions every function here follows.

// C names are part of the ABI, so Rust naming rules give way to them.
#![allow(non_camel_case_types)]

// Declared in the order the header presents them (cbindgen follows it; rustfmt would sort a
// single block, hence one block each).
pub mod version;

pub mod status;

pub mod boundary;

pub mod string;

pub mod args;

pub mod strategy;

pub mod custom;

pub mod decision;

pub mod state;

pub mod shard_list;

pub mod allocate;

pub mod decide;

pub mod hashing;

mod step;

pub mod envelope;

pub mod coordinator;

pub mod region;

pub mod driver;

pub mod worker_id;

#[cfg(feature = "etcd")]
pub mod etcd;
// Asynchronous hosts: operations with tickets, completed later.
pub mod pipeline;
pub mod replay;
