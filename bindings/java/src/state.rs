//! `org.shardline.AllocationState`: the allocation map (regions in map order with their
//! shards, the cluster view) that strategies decide on.
//!
//! A Java `AllocationState` is either an owned map or a read-only view lent to a custom
//! strategy's callback for the duration of that callback (the Java bridge invalidates it in a
//! `finally`). An owned map sits in the shared handle cell and is held read-only while a
//! strategy decides on it: a callback that tries to change it gets REENTRANT_CALL, another
//! thread changing it waits for the decision.

use jni::objects::{JObjectArray, JString};
use jni::sys::{jboolean, jint, jlong, jobjectArray, jstring, JNI_FALSE, JNI_TRUE};

use shardline_bind::handle::Wait;
use shardline_bind::host_state::HostState;
use shardline_bind::Failure as BindFailure;
use shardline_core::model::Address;
use shardline_core::model::ClusterView;
use shardline_core::model::{AllocationState, Region};
use shardline_core::strategy::{rank, AkkaOptions};

use crate::boundary::{Failure, Result};
use crate::convert::{member, opt_new_string, opt_string, read_strings, string, string_array};
use crate::native::native;

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

unsafe fn write<R>(raw: jlong, f: impl FnOnce(&mut AllocationState) -> Result<R>) -> Result<R> {
    // SAFETY: forwarded contract.
    unsafe { get(raw) }?.write(run, |s| Ok(f(s)))?
}

fn region<'a>(s: &'a AllocationState, id: &str) -> Result<&'a Region> {
    s.region(id)
        .ok_or_else(|| Failure::invalid_state(format!("region {id:?} is not registered")))
}

native! { fn Java_org_shardline_AllocationState_nNew(env, self_address: JString<'l>) -> jlong {
    let a = Address::parse(&string(env, &self_address, "selfAddress")?)?;
    let state = HostState::owned("AllocationState", AllocationState::new(ClusterView::new(a)));
    Ok(Box::into_raw(Box::new(state)) as jlong)
}}

native! { fn Java_org_shardline_AllocationState_nFree(_, h: jlong) {
    if h != 0 {
        // SAFETY: Java frees an owned handle once, after its last call.
        drop(unsafe { Box::from_raw(h as *mut HostState) });
    }
    Ok(())
}}

native! { fn Java_org_shardline_AllocationState_nUpsertMember(
    env, h: jlong, fields: JObjectArray<'l>, up_number: jint,
) {
    let m = member(env, &fields, up_number)?;
    unsafe {
        write(h, |s| {
            s.upsert_member(m);
            Ok(())
        })
    }
}}

native! { fn Java_org_shardline_AllocationState_nRemoveMember(
    env, h: jlong, address: JString<'l>,
) -> jboolean {
    let a = string(env, &address, "address")?;
    let removed = unsafe { write(h, |s| Ok(s.remove_member(&a).is_some())) }?;
    Ok(if removed { JNI_TRUE } else { JNI_FALSE })
}}

native! { fn Java_org_shardline_AllocationState_nSetReachable(
    env, h: jlong, address: JString<'l>, reachable: jboolean,
) {
    let a = Address::parse(&string(env, &address, "address")?)?;
    unsafe {
        write(h, |s| {
            s.set_reachable(a.as_str(), reachable != JNI_FALSE);
            Ok(())
        })
    }
}}

native! { fn Java_org_shardline_AllocationState_nAddRegion(
    env, h: jlong, id: JString<'l>, address: JString<'l>, local: jboolean, shards: JObjectArray<'l>,
) {
    let id = string(env, &id, "region id")?;
    let a = Address::parse(&string(env, &address, "address")?)?;
    let shards = read_strings(env, &shards, "shards")?;
    unsafe {
        write(h, |s| {
            s.add_region(&id, a, local != JNI_FALSE)?;
            for shard in &shards {
                if let Err(e) = s.add_shard(&id, shard) {
                    // All or nothing: a half-registered region would surprise the caller.
                    s.remove_region(&id)?;
                    return Err(e.into());
                }
            }
            Ok(())
        })
    }
}}

native! { fn Java_org_shardline_AllocationState_nRemoveRegion(
    env, h: jlong, id: JString<'l>,
) -> jobjectArray {
    let id = string(env, &id, "region id")?;
    let shards = unsafe { write(h, |s| Ok(s.remove_region(&id)?)) }?;
    string_array(env, shards.iter().map(|s| &**s))
}}

native! { fn Java_org_shardline_AllocationState_nSetEligible(
    env, h: jlong, id: JString<'l>, eligible: jboolean,
) {
    let id = string(env, &id, "region id")?;
    unsafe { write(h, |s| Ok(s.set_eligible(&id, eligible != JNI_FALSE)?)) }
}}

native! { fn Java_org_shardline_AllocationState_nAddShard(
    env, h: jlong, region: JString<'l>, shard: JString<'l>,
) {
    let r = string(env, &region, "region")?;
    let shard = string(env, &shard, "shard")?;
    unsafe { write(h, |s| Ok(s.add_shard(&r, &shard)?)) }
}}

native! { fn Java_org_shardline_AllocationState_nRemoveShard(
    env, h: jlong, shard: JString<'l>,
) -> jstring {
    let shard = string(env, &shard, "shard")?;
    let r = unsafe { write(h, |s| Ok(s.remove_shard(&shard)?)) }?;
    crate::convert::new_string(env, &r)
}}

native! { fn Java_org_shardline_AllocationState_nHomeOf(
    env, h: jlong, shard: JString<'l>,
) -> jstring {
    let shard = string(env, &shard, "shard")?;
    let home = unsafe { read(h, |s| Ok(s.home_of(&shard).map(|r| r.id().to_string()))) }?;
    opt_new_string(env, home.as_deref())
}}

native! {
/// 0: regions, 1: shards.
fn Java_org_shardline_AllocationState_nCount(_, h: jlong, what: jint) -> jint {
    let n = unsafe {
        read(h, |s| {
            Ok(if what == 0 {
                s.region_count()
            } else {
                s.shard_count()
            })
        })
    }?;
    Ok(n.min(i32::MAX as usize) as jint)
}}

native! { fn Java_org_shardline_AllocationState_nIsUnreachable(
    env, h: jlong, address: JString<'l>,
) -> jboolean {
    let a = string(env, &address, "address")?;
    let u = unsafe { read(h, |s| Ok(s.cluster().is_unreachable(&a))) }?;
    Ok(if u { JNI_TRUE } else { JNI_FALSE })
}}

native! {
/// What = 0: region ids in map order; 1: region `arg` {address, node (the self address for a
/// local region), local, eligible}; 2: shards of region `arg`; 3: member `arg` {address, status,
/// appVersion, dataCenter, upNumber}; 4: member addresses, sorted; 5: regions with a known
/// member in Pekko's ShardSuitabilityOrdering (null when Pekko's sort would throw on the
/// inconsistent comparator); 6: {self address}. Null for a region or member that is not there.
fn Java_org_shardline_AllocationState_nList(
    env, h: jlong, what: jint, arg: JString<'l>,
) -> jobjectArray {
    let arg = opt_string(env, &arg)?;
    let arg = |name: &str| arg.as_deref().ok_or_else(|| Failure::null(name));
    let list: Option<Vec<String>> = unsafe {
        read(h, |s| {
            Ok(match what {
                0 => Some(s.regions().map(|r| r.id().to_string()).collect()),
                1 => s.region(arg("region id")?).map(|r| {
                    vec![
                        r.address().to_string(),
                        s.node_of(r).to_string(),
                        r.is_local().to_string(),
                        r.is_eligible().to_string(),
                    ]
                }),
                2 => Some(
                    region(s, arg("region id")?)?
                        .shards()
                        .map(|x| x.to_string())
                        .collect(),
                ),
                3 => s.cluster().member(arg("address")?).map(|m| {
                    vec![
                        m.address.to_string(),
                        m.status.to_string(),
                        m.app_version.to_string(),
                        m.data_center.clone(),
                        m.up_number.to_string(),
                    ]
                }),
                4 => {
                    let mut all: Vec<String> = s
                        .cluster()
                        .members()
                        .map(|m| m.address.to_string())
                        .collect();
                    all.sort();
                    Some(all)
                }
                5 => rank(s, AkkaOptions::default())
                    .map(|o| o.iter().map(|r| r.to_string()).collect()),
                6 => Some(vec![s.cluster().self_address().to_string()]),
                other => {
                    return Err(Failure::invalid_argument(format!("unknown list {other}")))
                }
            })
        })
    }?;
    match list {
        Some(l) => string_array(env, l.iter()),
        None => Ok(std::ptr::null_mut()),
    }
}}
