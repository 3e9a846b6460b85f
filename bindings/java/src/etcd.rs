//! etcd (`shardline_bind::etcd`): `org.shardline.Etcd`, the `EtcdLease` and `EtcdStore` it
//! hands out, and a `WorkerIdHolder` reserving in it. Every call blocks the calling Java
//! thread until etcd answers or the connection's timeout passes.
//!
//! The classes exist in every build; without the cargo feature `etcd`, `new Etcd(...)` throws
//! INVALID_STATE saying so.

use jni::objects::{JLongArray, JObject, JObjectArray, JString};
use jni::sys::jlong;

use shardline_bind::etcd::{self as bind, EtcdLease, EtcdStore, Serving};
use shardline_bind::ops::etcd as ops_etcd;

use crate::convert::{opt_string, read_strings, string, ttl_ms};
use crate::handle::{self, free_native, Handle};
use crate::native::native;
use crate::ops::ops_native;
use crate::workerid::{acquire, HolderTerms};

native! { fn Java_org_shardline_Etcd_nConnect(
    env, endpoints: JObjectArray<'l>, namespace: JString<'l>, timeout: jlong,
) -> jlong {
    let endpoints = read_strings(env, &endpoints, "endpoints")?;
    let namespace = string(env, &namespace, "namespace")?;
    let etcd = bind::connect(&endpoints, &namespace, Some(ttl_ms(timeout)?))?;
    Ok(Handle::into_raw("Etcd", etcd))
}}

native! { fn Java_org_shardline_Etcd_nLease(
    env, h: jlong, name: JString<'l>, owner: JString<'l>, ttl: jlong,
) -> jlong {
    let name = string(env, &name, "name")?;
    let owner = string(env, &owner, "owner")?;
    let ttl = ttl_ms(ttl)?;
    let lease = unsafe { handle::with::<bind::Etcd, _>(h, |e| Ok(bind::lease(e, &name, &owner, Some(ttl))?)) }?;
    Ok(Handle::into_raw("EtcdLease", lease))
}}

native! { fn Java_org_shardline_Etcd_nStore(
    env, h: jlong, name: JString<'l>, bound_to_lease: JString<'l>,
) -> jlong {
    let name = string(env, &name, "name")?;
    let bound = opt_string(env, &bound_to_lease)?;
    let store = unsafe { handle::with::<bind::Etcd, _>(h, |e| Ok(bind::store(e, &name, bound.as_deref()))) }?;
    Ok(Handle::into_raw("EtcdStore", store))
}}

ops_native!(
    Java_org_shardline_Etcd_nOp,
    "Etcd",
    bind::Etcd,
    ops_etcd::connection
);

native! {
/// A worker-id holder whose registry is a session on this etcd, with the tenure's TTL.
fn Java_org_shardline_Etcd_nHolder(
    env, h: jlong, config: JLongArray<'l>, tenure: JLongArray<'l>, layout: JLongArray<'l>,
    owner: JString<'l>, incarnation: jlong, seed: jlong, clock: JObject<'l>,
) -> jlong {
    let terms = HolderTerms { config, tenure, layout, owner, incarnation, seed, clock };
    acquire(env, terms, |ttl| unsafe {
        handle::with::<bind::Etcd, _>(h, |e| Ok(bind::registry(e, ttl)))
    })
}}

free_native!(Java_org_shardline_Etcd_nFree, bind::Etcd);

ops_native!(
    Java_org_shardline_EtcdLease_nOp,
    "EtcdLease",
    Serving<EtcdLease>,
    |l: &mut Serving<EtcdLease>, a| l.with(|l| ops_etcd::lease(l, a))
);

free_native!(Java_org_shardline_EtcdLease_nFree, Serving<EtcdLease>);

ops_native!(
    Java_org_shardline_EtcdStore_nOp,
    "EtcdStore",
    Serving<EtcdStore>,
    |s: &mut Serving<EtcdStore>, a| s.with(|s| ops_etcd::store(s, a))
);

free_native!(Java_org_shardline_EtcdStore_nFree, Serving<EtcdStore>);
