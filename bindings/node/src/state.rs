//! `AllocationState`: the allocation map strategies decide on (regions in map order, their
//! shards oldest first, the cluster view), kept up to date by the caller.
//!
//! Custom strategies receive a read-only view of the state being decided on; the view is
//! valid only while their callback runs.

use std::cell::Cell;
use std::ptr::NonNull;

use napi::bindgen_prelude::*;
use napi_derive::napi;

use shardline_bind::objects::{self, MemberInit, RegionInfo};
use shardline_bind::HandleCell;
use shardline_core::decide::{StateDoc, StateRegion};
use shardline_core::model::Address;
use shardline_core::model::AllocationState as CoreState;
use shardline_core::model::{ClusterView, Member};

use crate::conv;
use crate::error::{boundary, Code, Fail, R};
use crate::js::{Js, V};

// The owned variant sits inside the JavaScript object's own allocation and views are
// short-lived, so boxing the state would only add an indirection.
#[allow(clippy::large_enum_variant)]
enum Access {
    Owned(HandleCell<CoreState>),
    /// The state a custom strategy is deciding on, lent for the duration of its callback.
    View(Cell<Option<NonNull<CoreState>>>),
}

#[napi]
pub struct AllocationState {
    access: Access,
}

pub fn address(s: &str, name: &str) -> R<Address> {
    Ok(objects::address(s, name)?)
}

/// `{address, status?, appVersion?, dataCenter?, upNumber?}`.
pub fn member(js: Js, v: V, name: &str) -> R<Member> {
    Ok(conv::de::<MemberInit>(js, v, name)?.build(name)?)
}

impl AllocationState {
    pub fn owned(state: CoreState) -> AllocationState {
        AllocationState {
            access: Access::Owned(HandleCell::new("AllocationState", state)),
        }
    }

    pub fn view() -> AllocationState {
        AllocationState {
            access: Access::View(Cell::new(None)),
        }
    }

    /// Points a view at `state`; `None` ends the loan.
    pub fn lend(&self, state: Option<&CoreState>) {
        if let Access::View(p) = &self.access {
            p.set(state.map(NonNull::from));
        }
    }

    pub fn read<T>(&self, f: impl FnOnce(&CoreState) -> R<T>) -> R<T> {
        match &self.access {
            Access::Owned(cell) => {
                let s = cell.read()?;
                f(&s)
            }
            Access::View(p) => match p.get() {
                // SAFETY: a view is lent only while the core holds the state borrowed for the
                // callback that received it, and the loan ends before that borrow does.
                Some(p) => f(unsafe { p.as_ref() }),
                None => Err(Fail::state(
                    "this AllocationState view was lent to a strategy callback and is no longer valid",
                )),
            },
        }
    }

    fn write<T>(&self, f: impl FnOnce(&mut CoreState) -> R<T>) -> R<T> {
        match &self.access {
            Access::Owned(cell) => {
                let mut s = cell.hold()?;
                f(&mut s)
            }
            Access::View(_) => Err(Fail::new(
                Code::ReentrantCall,
                "a strategy callback tried to change the state it is deciding on",
            )),
        }
    }
}

/// Builds a state from `{selfAddress?, members?, regions?, candidates?}`, the shape of the
/// conformance vectors: without `members` every address is an Up member; with `candidates`
/// exactly those regions may receive shards, in that order (regions missing for a candidate
/// are added with the address as id).
pub fn build(js: Js, init: V) -> R<CoreState> {
    let init = conv::object(js, init, "init")?;
    let mut doc = StateDoc::default();
    if let Some(list) = conv::field(js, init, "regions")? {
        for (i, r) in conv::iterable(js, list, "regions")?.into_iter().enumerate() {
            let at = format!("regions[{i}]");
            let r = conv::object(js, r, &at)?;
            let id = conv::string(js, js.get(r, "id")?, &format!("{at}.id"))?;
            doc.regions.push(StateRegion {
                address: match conv::field(js, r, "address")? {
                    Some(a) => conv::string(js, a, &format!("{at}.address"))?,
                    None => id.clone(),
                },
                shards: conv::shards(js, js.get(r, "shards")?, &format!("{at}.shards"))?,
                local: conv::opt_bool(js, js.get(r, "local")?, &format!("{at}.local"), false)?,
                id,
                ..StateRegion::default()
            });
        }
    }
    if let Some(c) = conv::field(js, init, "candidates")? {
        doc.candidates = Some(conv::strings(js, c, "candidates")?);
    }
    if let Some(s) = conv::field(js, init, "selfAddress")? {
        doc.self_address = Some(address(
            &conv::string(js, s, "selfAddress")?,
            "selfAddress",
        )?);
    }
    if let Some(list) = conv::field(js, init, "members")? {
        let members = conv::iterable(js, list, "members")?;
        doc.members = Some(
            members
                .into_iter()
                .enumerate()
                .map(|(i, m)| member(js, m, &format!("members[{i}]")))
                .collect::<R<_>>()?,
        );
    }
    Ok(doc.build()?)
}

#[napi]
impl AllocationState {
    /// An empty state; `selfAddress` is the coordinator's own node (local regions run there).
    #[napi(constructor, ts_args_type = "selfAddress?: string")]
    pub fn new(env: &Env, self_address: Unknown) -> Result<Self> {
        boundary(env, None, |js| {
            let a = conv::opt_string(js, self_address.raw(), "selfAddress")?
                .unwrap_or_else(|| "shardline://self".into());
            Ok(AllocationState::owned(CoreState::new(ClusterView::new(
                address(&a, "selfAddress")?,
            ))))
        })
    }

    /// A state in one call, in the shape of the conformance vectors.
    #[napi(factory, ts_args_type = "init: StateInit")]
    pub fn build(env: &Env, init: Unknown) -> Result<Self> {
        boundary(env, None, |js| {
            Ok(AllocationState::owned(build(js, init.raw())?))
        })
    }

    #[napi(getter)]
    pub fn self_address(&self, env: &Env) -> Result<String> {
        boundary(env, None, |_| {
            self.read(|s| Ok(s.cluster().self_address().as_str().to_owned()))
        })
    }

    #[napi(getter)]
    pub fn region_count(&self, env: &Env) -> Result<u32> {
        boundary(env, None, |_| self.read(|s| Ok(s.region_count() as u32)))
    }

    #[napi(getter)]
    pub fn shard_count(&self, env: &Env) -> Result<u32> {
        boundary(env, None, |_| self.read(|s| Ok(s.shard_count() as u32)))
    }

    /// Adds or replaces a cluster member (matched by address).
    #[napi(ts_args_type = "member: MemberInit")]
    pub fn upsert_member(&self, env: &Env, member_init: Unknown) -> Result<()> {
        boundary(env, None, |js| {
            let m = member(js, member_init.raw(), "member")?;
            self.write(|s| {
                s.upsert_member(m);
                Ok(())
            })
        })
    }

    /// Removes a member; true if it was known.
    #[napi(ts_args_type = "address: string")]
    pub fn remove_member(&self, env: &Env, addr: Unknown) -> Result<bool> {
        boundary(env, None, |js| {
            let a = conv::string(js, addr.raw(), "address")?;
            let a = address(&a, "address")?;
            self.write(|s| Ok(s.remove_member(a.as_str()).is_some()))
        })
    }

    #[napi(ts_args_type = "address: string, reachable: boolean")]
    pub fn set_reachable(&self, env: &Env, addr: Unknown, reachable: Unknown) -> Result<()> {
        boundary(env, None, |js| {
            let a = address(&conv::string(js, addr.raw(), "address")?, "address")?;
            let r = conv::boolean(js, reachable.raw(), "reachable")?;
            self.write(|s| {
                s.set_reachable(a.as_str(), r);
                Ok(())
            })
        })
    }

    /// The members, sorted by address.
    #[napi(ts_return_type = "Member[]")]
    pub fn members(&self, env: &Env) -> Result<Unknown<'_>> {
        boundary(env, None, |js| {
            self.read(|s| Ok(unknown(js, conv::ser(js, &objects::members(s))?)))
        })
    }

    /// Registers a region at the end of map order; it starts eligible, with no shards.
    #[napi(ts_args_type = "id: string, address: string, local?: boolean")]
    pub fn add_region(&self, env: &Env, id: Unknown, addr: Unknown, local: Unknown) -> Result<()> {
        boundary(env, None, |js| {
            let id = conv::string(js, id.raw(), "id")?;
            let a = address(&conv::string(js, addr.raw(), "address")?, "address")?;
            let local = conv::opt_bool(js, local.raw(), "local", false)?;
            self.write(|s| Ok(s.add_region(&id, a, local)?))
        })
    }

    /// Removes a region; returns its shards (now unallocated), oldest first.
    #[napi(ts_args_type = "id: string")]
    pub fn remove_region(&self, env: &Env, id: Unknown) -> Result<Vec<String>> {
        boundary(env, None, |js| {
            let id = conv::string(js, id.raw(), "id")?;
            self.write(|s| {
                Ok(s.remove_region(&id)?
                    .iter()
                    .map(|s| s.to_string())
                    .collect())
            })
        })
    }

    /// Whether a region may receive new shards; becoming eligible moves it to the end of
    /// candidate order.
    #[napi(ts_args_type = "id: string, eligible: boolean")]
    pub fn set_eligible(&self, env: &Env, id: Unknown, eligible: Unknown) -> Result<()> {
        boundary(env, None, |js| {
            let id = conv::string(js, id.raw(), "id")?;
            let e = conv::boolean(js, eligible.raw(), "eligible")?;
            self.write(|s| Ok(s.set_eligible(&id, e)?))
        })
    }

    #[napi(ts_args_type = "region: string, shard: ShardId")]
    pub fn add_shard(&self, env: &Env, region: Unknown, shard: Unknown) -> Result<()> {
        boundary(env, None, |js| {
            let region = conv::string(js, region.raw(), "region")?;
            let shard = conv::shard(js, shard.raw(), "shard")?;
            self.write(|s| Ok(s.add_shard(&region, &shard)?))
        })
    }

    /// Deallocates a shard; returns the region that held it.
    #[napi(ts_args_type = "shard: ShardId")]
    pub fn remove_shard(&self, env: &Env, shard: Unknown) -> Result<String> {
        boundary(env, None, |js| {
            let shard = conv::shard(js, shard.raw(), "shard")?;
            self.write(|s| Ok(s.remove_shard(&shard)?.to_string()))
        })
    }

    #[napi(ts_args_type = "shard: ShardId")]
    pub fn home_of(&self, env: &Env, shard: Unknown) -> Result<Option<String>> {
        boundary(env, None, |js| {
            let shard = conv::shard(js, shard.raw(), "shard")?;
            self.read(|s| Ok(s.home_of(&shard).map(|r| r.id().to_string())))
        })
    }

    #[napi(ts_args_type = "id: string", ts_return_type = "RegionInfo | null")]
    pub fn region(&self, env: &Env, id: Unknown) -> Result<Unknown<'_>> {
        boundary(env, None, |js| {
            let id = conv::string(js, id.raw(), "id")?;
            self.read(|s| {
                let r = s.region(&id).map(|r| RegionInfo::of(s, r));
                Ok(unknown(js, conv::ser(js, &r)?))
            })
        })
    }

    /// Every region in map order (the order ties are broken by).
    #[napi(ts_return_type = "RegionInfo[]")]
    pub fn regions(&self, env: &Env) -> Result<Unknown<'_>> {
        boundary(env, None, |js| {
            self.read(|s| Ok(unknown(js, conv::ser(js, &RegionInfo::all(s))?)))
        })
    }
}

/// Hands a raw value back through napi-rs's typed return path.
pub fn unknown<'a>(js: Js, v: V) -> Unknown<'a> {
    // SAFETY: `v` was made in this call's scope on this env.
    unsafe { Unknown::from_raw_unchecked(js.env, v) }
}
