//! `org.shardline.AllocationState`: the allocation map (regions in map order with their
//! shards, the cluster view) that strategies decide on.
//!
//! A Java `AllocationState` is either an owned map or a read-only view lent to a custom
//! strategy's callback for the duration of that callback (the Java bridge invalidates it in a
//! `finally`). An owned map sits in the shared handle cell and is held read-only while a
//! strategy decides on it: a callback that tries to change it gets REENTRANT_CALL, another
//! thread changing it waits for the decision.

use jni::objects::{JObjectArray, JString};
use jni::sys::{jboolean, jint, jlong, jobject, jstring};

use shardline_bind::handle::Wait;
use shardline_bind::host_state::HostState;
use shardline_bind::ops::state as ops_state;
use shardline_bind::{Failure as BindFailure, Status};
use shardline_core::model::AllocationState;

use crate::boundary::{Failure, Result};
use crate::convert::{new_string, string, text, text_packed, TextBuf};
use crate::native::native;
use crate::ops;

/// The `HostState` behind a Java handle (an owned map, or a view during its callback).
///
/// # Safety
/// `raw` is 0 or a live `HostState`.
pub unsafe fn get<'a>(raw: jlong) -> Result<&'a HostState> {
    // SAFETY: per the contract.
    unsafe { (raw as *const HostState).as_ref() }
        .ok_or_else(|| Failure::invalid_state("the AllocationState is closed"))
}

fn run(w: Wait<'_, AllocationState>) -> Result<(), BindFailure> {
    w.run()
}

/// # Safety
/// As for [`get`].
pub unsafe fn read<R>(raw: jlong, f: impl FnOnce(&AllocationState) -> Result<R>) -> Result<R> {
    // SAFETY: forwarded contract.
    unsafe { get(raw) }?.read(run, f)?
}

native! { fn Java_org_shardline_AllocationState_nNew(env, self_address: JString<'l>) -> jlong {
    let a = string(env, &self_address, "selfAddress")?;
    let state = HostState::owned("AllocationState", ops_state::new(Some(&a))?);
    Ok(Box::into_raw(Box::new(state)) as jlong)
}}

native! { fn Java_org_shardline_AllocationState_nFree(_, h: jlong) {
    if h != 0 {
        // SAFETY: Java frees an owned handle once, after its last call.
        drop(unsafe { Box::from_raw(h as *mut HostState) });
    }
    Ok(())
}}

native! {
/// `AllocationState.regionCount`: one handle in, an integer out, the cheapest call the binding
/// makes (the benchmarks bound allocate's extra cost by it), without `nOp`'s conversions.
fn Java_org_shardline_AllocationState_nRegionCount(_, h: jlong) -> jint {
    // SAFETY: Java passes a live handle and keeps it alive for the call (NativeHandle).
    let n = unsafe { read(h, |s| Ok(s.region_count())) }?;
    jint::try_from(n).map_err(|_| Failure::new(Status::Internal, "more than 2^31 regions"))
}}

native! {
/// `AllocationState.addShard`, typed: a host mirroring a coordinator's map calls it on every
/// allocation, and the operation path's argument conversion cost more than the change. Both ids
/// are read onto the stack, the shard's packed when short ASCII (see `convert::text_packed`).
fn Java_org_shardline_AllocationState_nAddShard(
    env, h: jlong, region: JString<'l>, lo: jlong, hi: jlong, shard_length: jint,
    shard: JString<'l>,
) {
    let (mut region_buf, mut shard_buf) = (TextBuf::new(), TextBuf::new());
    let region = text(env, &region, "region", &mut region_buf)?;
    let shard = text_packed(env, (lo, hi, shard_length), &shard, "shard", &mut shard_buf)?;
    // SAFETY: Java passes a live handle and keeps it alive for the call (NativeHandle).
    Ok(unsafe { get(h) }?.write(run, |st| st.add_shard(region, shard))?)
}}

native! {
/// `AllocationState.removeShard` (as `nAddShard`, per hand-off): the region that held it, or
/// null when the caller does not want it (a new `String` costs more than the removal).
fn Java_org_shardline_AllocationState_nRemoveShard(
    env, h: jlong, lo: jlong, hi: jlong, shard_length: jint, shard: JString<'l>, answer: jboolean,
) -> jstring {
    let mut shard_buf = TextBuf::new();
    let shard = text_packed(env, (lo, hi, shard_length), &shard, "shard", &mut shard_buf)?;
    // SAFETY: Java passes a live handle and keeps it alive for the call (NativeHandle).
    let region = unsafe { get(h) }?.write(run, |st| st.remove_shard(shard))?;
    if answer == 0 {
        return Ok(std::ptr::null_mut());
    }
    new_string(env, &region)
}}

native! {
/// The operations of `shardline_bind::ops::state`, on an owned state or a callback's view.
fn Java_org_shardline_AllocationState_nOp(
    env, h: jlong, op: JString<'l>, args: JObjectArray<'l>,
) -> jobject {
    // SAFETY: Java passes a live handle and keeps it alive for the call (NativeHandle).
    ops::call(env, "AllocationState", &op, &args, |a| {
        Ok(ops_state::call(unsafe { get(h) }?, run, a)?)
    })
}}
