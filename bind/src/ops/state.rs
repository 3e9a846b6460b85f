//! The operations of an `AllocationState` (owned, or the view a strategy callback is lent),
//! answered the same in every language.

use std::collections::BTreeMap;

use serde::Deserialize;
use shardline_core::model::{AllocationState, Amount, ClusterView, ShardRule};
use shardline_core::strategy::{rank, AkkaOptions};

use super::{reply, Args, Reply, Tree};
use crate::host_state::{HostState, Park};
use crate::objects::{self, MemberInfo, MemberInit, RegionInfo, Shard};
use crate::Failure;

/// An empty state deciding as `self_address` (local regions run there); the default is
/// `shardline://self`.
pub fn new(self_address: Option<&str>) -> Result<AllocationState, Failure> {
    let a = objects::address(self_address.unwrap_or("shardline://self"), "selfAddress")?;
    Ok(AllocationState::new(ClusterView::new(a)))
}

/// Reads: `is_view`, `self_address`, `region_count`, `shard_count`, `regions` (map order),
/// `region(id)`, `home_of(shard)`, `member(address)`, `members` (sorted by address),
/// `is_unreachable(address)`, `rank(tie_break_by_age?)` (Pekko's `ShardSuitabilityOrdering`,
/// INVALID_STATE where Pekko's sort would throw), `ranking(tie_break_by_age?)` (the same, null
/// where Pekko's sort would throw).
/// Changes: `upsert_member(member)`, `remove_member(address)`, `set_reachable(address,
/// reachable)`, `add_region(id, address, local?, shards?)` (all or nothing),
/// `remove_region(id)` (its shards, now unallocated), `set_eligible(id, eligible)`,
/// `add_shard(region, shard)`, `remove_shard(shard)` (the region that held it).
/// least-load's inputs: `set_shard_load(shard, load)` and `set_region_capacity(id, capacity)`
/// (a number, or a number per dimension), `set_region_tags(id, tags)`,
/// `set_region_max_shards(id, max)` (null: no cap), `set_region_draining(id, draining)`,
/// `set_shard_rule(shard, {tags?, pin?})` (an empty rule removes it).
///
/// `park` is how the binding waits for a state another thread holds.
pub fn call(s: &HostState, park: impl Park, a: Args<'_>) -> Reply {
    match a.op() {
        "is_view" => reply(&s.is_view()),
        "upsert_member" => {
            let m = a.get::<MemberInit>(0, "member")?.build("member")?;
            write(s, park, |st| {
                st.upsert_member(m);
                Ok(())
            })
        }
        "remove_member" => {
            let addr = a.get::<String>(0, "address")?;
            write(s, park, |st| Ok(st.remove_member(&addr).is_some()))
        }
        "set_reachable" => {
            let addr = objects::address(&a.get::<String>(0, "address")?, "address")?;
            let reachable = a.get::<bool>(1, "reachable")?;
            write(s, park, |st| {
                st.set_reachable(addr.as_str(), reachable);
                Ok(())
            })
        }
        "add_region" => {
            let id = a.get::<String>(0, "id")?;
            let addr = objects::address(&a.get::<String>(1, "address")?, "address")?;
            let local = a.opt::<bool>(2, "local")?.unwrap_or(false);
            let shards = a.opt::<Vec<Shard>>(3, "shards")?.unwrap_or_default();
            write(s, park, |st| add_region(st, &id, addr, local, &shards))
        }
        "remove_region" => {
            let id = a.get::<String>(0, "id")?;
            write(s, park, |st| {
                Ok(st
                    .remove_region(&id)?
                    .iter()
                    .map(|s| s.to_string())
                    .collect::<Vec<_>>())
            })
        }
        "set_eligible" => {
            let id = a.get::<String>(0, "id")?;
            let eligible = a.get::<bool>(1, "eligible")?;
            write(s, park, |st| st.set_eligible(&id, eligible))
        }
        "add_shard" => {
            let region = a.get::<String>(0, "region")?;
            let shard = a.get::<Shard>(1, "shard")?;
            write(s, park, |st| st.add_shard(&region, &shard))
        }
        "remove_shard" => {
            let shard = a.get::<Shard>(0, "shard")?;
            write(s, park, |st| Ok(st.remove_shard(&shard)?.to_string()))
        }
        "set_shard_load" => {
            let shard = a.get::<Shard>(0, "shard")?;
            let load = a.get::<Amount>(1, "load")?;
            write(s, park, |st| st.set_shard_load(&shard, &load))
        }
        "set_shard_rule" => {
            let shard = a.get::<Shard>(0, "shard")?;
            let rule = a.get::<RuleDoc>(1, "rule")?.rule();
            write(s, park, |st| {
                st.set_shard_rule(&shard, rule);
                Ok(())
            })
        }
        "set_region_capacity" => {
            let (id, capacity) = (a.get::<String>(0, "id")?, a.get::<Amount>(1, "capacity")?);
            write(s, park, |st| st.set_region_capacity(&id, &capacity))
        }
        "set_region_tags" => {
            let (id, tags) = (a.get::<String>(0, "id")?, a.get::<Vec<String>>(1, "tags")?);
            write(s, park, |st| {
                st.set_region_tags(&id, tags.iter().map(|t| &**t))
            })
        }
        "set_region_max_shards" => {
            let (id, max) = (a.get::<String>(0, "id")?, a.opt::<usize>(1, "max")?);
            write(s, park, |st| st.set_region_max_shards(&id, max))
        }
        "set_region_draining" => {
            let (id, draining) = (a.get::<String>(0, "id")?, a.get::<bool>(1, "draining")?);
            write(s, park, |st| st.set_region_draining(&id, draining))
        }
        _ => s.read(park, |st| query(st, a))?,
    }
}

fn write<T: serde::Serialize>(
    s: &HostState,
    park: impl Park,
    f: impl FnOnce(&mut AllocationState) -> shardline_core::Result<T>,
) -> Reply {
    reply(&s.write(park, f)?)
}

fn add_region(
    st: &mut AllocationState,
    id: &str,
    address: shardline_core::model::Address,
    local: bool,
    shards: &[Shard],
) -> shardline_core::Result<()> {
    st.add_region(id, address, local)?;
    for shard in shards {
        if let Err(e) = st.add_shard(id, shard) {
            // A half-registered region would surprise the caller.
            st.remove_region(id)?;
            return Err(e);
        }
    }
    Ok(())
}

fn query(st: &AllocationState, a: Args<'_>) -> Reply {
    match a.op() {
        "self_address" => reply(st.cluster().self_address().as_str()),
        "region_count" => reply(&st.region_count()),
        "shard_count" => reply(&st.shard_count()),
        "regions" => reply(&RegionInfo::all(st)),
        "region" => {
            let id = a.get::<String>(0, "id")?;
            reply(&st.region(&id).map(|r| RegionInfo::of(st, r)))
        }
        "home_of" => reply(&st.home_of(&a.get::<Shard>(0, "shard")?).map(|r| &**r.id())),
        "member" => {
            let addr = a.get::<String>(0, "address")?;
            reply(&st.cluster().member(&addr).map(MemberInfo::from))
        }
        "members" => reply(&objects::members(st)),
        "is_unreachable" => reply(&st.cluster().is_unreachable(&a.get::<String>(0, "address")?)),
        "rank" => {
            let ids = ranking(st, a)?.ok_or_else(|| {
                Failure::invalid_state(
                    "the region ordering is inconsistent (Pekko's sort would throw)",
                )
            })?;
            reply(&ids)
        }
        "ranking" => reply(&ranking(st, a)?),
        _ => Err(a.unknown()),
    }
}

/// Region ids in Pekko's `ShardSuitabilityOrdering`, best home first; `None` where Pekko's
/// sort would throw on its comparator's inconsistency.
fn ranking(st: &AllocationState, a: Args<'_>) -> Result<Option<Vec<String>>, Failure> {
    let akka = AkkaOptions {
        tie_break_by_age: a.opt(0, "tie_break_by_age")?.unwrap_or(false),
        ..AkkaOptions::default()
    };
    Ok(rank(st, akka).map(|ids| ids.iter().map(|r| r.to_string()).collect()))
}

/// A region of a [`StateInit`], with least-load's inputs as in the conformance vectors.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RegionInit {
    pub id: String,
    /// Default: the id.
    pub address: Option<String>,
    #[serde(default)]
    pub shards: Vec<Shard>,
    #[serde(default)]
    pub local: bool,
    pub capacity: Option<Amount>,
    #[serde(default)]
    pub tags: Vec<String>,
    pub max_shards: Option<usize>,
    #[serde(default)]
    pub draining: bool,
}

/// Where a shard may live: `{tags?, pin?}`, as the vectors' `shardRules` write it.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleDoc {
    #[serde(default)]
    pub tags: Vec<String>,
    pub pin: Option<String>,
}

impl RuleDoc {
    fn rule(&self) -> ShardRule {
        ShardRule::new(self.tags.iter().map(|t| &**t), self.pin.as_deref())
    }
}

/// A state in one document, the shape of the conformance vectors: `{selfAddress?, members?,
/// regions?, candidates?, loads?, shardRules?}`. Without `members` every address is an Up
/// member; with `candidates` exactly those regions may receive shards, in that order.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StateInit {
    pub self_address: Option<String>,
    pub members: Option<Vec<MemberInit>>,
    #[serde(default)]
    pub regions: Vec<RegionInit>,
    pub candidates: Option<Vec<String>>,
    /// least-load: shard loads (default 1).
    #[serde(default)]
    pub loads: BTreeMap<String, Amount>,
    #[serde(default)]
    pub shard_rules: BTreeMap<String, RuleDoc>,
}

impl StateInit {
    pub fn build(self) -> Result<AllocationState, Failure> {
        use shardline_core::decide::{StateDoc, StateRegion};
        let members = match self.members {
            Some(ms) => Some(
                ms.into_iter()
                    .enumerate()
                    .map(|(i, m)| m.build(&format!("members[{i}]")))
                    .collect::<shardline_core::Result<_>>()?,
            ),
            None => None,
        };
        let self_address = match self.self_address {
            Some(a) => Some(objects::address(&a, "selfAddress")?),
            None => None,
        };
        let regions = self
            .regions
            .into_iter()
            .map(|r| StateRegion {
                address: r.address.unwrap_or_else(|| r.id.clone()),
                id: r.id,
                shards: r.shards.into_iter().map(|s| s.0).collect(),
                local: r.local,
                capacity: r.capacity,
                tags: r.tags,
                max_shards: r.max_shards,
                draining: r.draining,
            })
            .collect();
        let doc = StateDoc {
            self_address,
            members,
            regions,
            candidates: self.candidates,
            loads: self.loads,
            shard_rules: self
                .shard_rules
                .iter()
                .map(|(shard, r)| (shard.clone(), r.rule()))
                .collect(),
            ..StateDoc::default()
        };
        Ok(doc.build()?)
    }
}

/// [`StateInit`] read from a host's tree, its errors naming `init`.
pub fn build(init: &Tree) -> Result<AllocationState, Failure> {
    let values = std::slice::from_ref(init);
    Args::new("AllocationState", "build", values)
        .get::<StateInit>(0, "init")?
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handle::Wait;
    use crate::Status;

    fn run(w: Wait<'_, AllocationState>) -> Result<(), Failure> {
        w.run()
    }

    fn text(s: &str) -> Tree {
        Tree::Text(s.into())
    }

    fn op(s: &HostState, name: &str, values: &[Tree]) -> Reply {
        call(s, run, Args::new("AllocationState", name, values))
    }

    fn owned() -> HostState {
        HostState::owned("AllocationState", new(Some("pekko://s@h:1")).unwrap())
    }

    #[test]
    fn changes_and_reads_answer_plain_values() {
        let s = owned();
        let member = Tree::Map(vec![
            (text("address"), text("pekko://s@h:2")),
            (text("status"), text("Leaving")),
        ]);
        op(&s, "upsert_member", &[member]).unwrap();
        op(&s, "add_region", &[text("a"), text("pekko://s@h:2")]).unwrap();
        op(&s, "add_shard", &[text("a"), text("7")]).unwrap();
        assert_eq!(op(&s, "home_of", &[text("7")]).unwrap(), text("a"));
        assert_eq!(op(&s, "shard_count", &[]).unwrap(), Tree::Integer(1.into()));
        let region = op(&s, "region", &[text("a")]).unwrap();
        let field = |k: &str| {
            region
                .as_map()
                .unwrap()
                .iter()
                .find(|(key, _)| key.as_text() == Some(k))
                .map(|(_, v)| v.clone())
        };
        assert_eq!(field("status"), Some(text("Leaving")));
        assert_eq!(field("shards"), Some(Tree::Array(vec![text("7")])));
        assert_eq!(op(&s, "region", &[text("b")]).unwrap(), Tree::Null);
        let removed = op(&s, "remove_region", &[text("a")]).unwrap();
        assert_eq!(removed, Tree::Array(vec![text("7")]));
        assert_eq!(
            op(&s, "remove_member", &[text("pekko://s@h:9")]).unwrap(),
            Tree::Bool(false)
        );
    }

    /// Regions a and b, each on its own Up member.
    fn two_regions() -> HostState {
        let s = owned();
        for (id, port) in [("a", "1"), ("b", "2")] {
            let addr = format!("pekko://s@h:{port}");
            let member = Tree::Map(vec![(text("address"), text(&addr))]);
            op(&s, "upsert_member", &[member]).unwrap();
            op(&s, "add_region", &[text(id), text(&addr)]).unwrap();
        }
        s
    }

    #[test]
    fn rank_orders_regions_with_members() {
        let s = two_regions();
        op(&s, "add_shard", &[text("a"), Tree::Integer(1.into())]).unwrap();
        let want = Tree::Array(vec![text("b"), text("a")]);
        assert_eq!(op(&s, "rank", &[]).unwrap(), want);
        assert_eq!(op(&s, "ranking", &[Tree::Bool(true)]).unwrap(), want);
    }

    /// least-load's choice of a home for a new shard on `s`.
    fn least_load_home(s: &HostState) -> String {
        let config = serde_json::json!({"kind": "least-load"});
        let config: shardline_core::strategy::StrategyConfig =
            serde_json::from_value(config).unwrap();
        let mut strategy = config.build().unwrap();
        let got = s
            .read(run, |st| strategy.allocate(st, None, "new", None))
            .unwrap()
            .unwrap();
        match got {
            shardline_core::strategy::Allocation::Region(r) => r.to_string(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn least_load_inputs_change_its_decision_by_op_and_by_document() {
        // a holds one shard, b two: least-shard's choice, and least-load's with unit loads, is a
        let s = two_regions();
        for (region, shard) in [("a", "1"), ("b", "2"), ("b", "3")] {
            op(&s, "add_shard", &[text(region), text(shard)]).unwrap();
        }
        assert_eq!(least_load_home(&s), "a");
        op(&s, "set_shard_load", &[text("1"), Tree::Integer(10.into())]).unwrap();
        assert_eq!(least_load_home(&s), "b", "a's one shard weighs 10");
        op(&s, "set_region_capacity", &[text("a"), Tree::Float(100.0)]).unwrap();
        assert_eq!(least_load_home(&s), "a", "a holds 100");
        op(&s, "set_region_draining", &[text("a"), Tree::Bool(true)]).unwrap();
        assert_eq!(least_load_home(&s), "b", "a drains");
        op(&s, "set_region_draining", &[text("a"), Tree::Bool(false)]).unwrap();
        let rule = Tree::Map(vec![(text("pin"), text("b"))]);
        op(&s, "set_shard_rule", &[text("new"), rule]).unwrap();
        assert_eq!(least_load_home(&s), "b", "pinned");

        let bad = op(
            &s,
            "set_shard_load",
            &[text("1"), Tree::Integer((-1).into())],
        );
        assert_eq!(bad.unwrap_err().status, Status::InvalidArgument);
        let unknown = op(&s, "set_region_tags", &[text("z"), Tree::Array(vec![])]);
        assert!(unknown.is_err(), "no region z");

        let doc: Tree = serde_json::from_value(serde_json::json!({
            "regions": [
                {"id": "a", "address": "pekko://s@h:1", "shards": ["1"], "capacity": 100},
                {"id": "b", "address": "pekko://s@h:2", "shards": ["2", "3"], "tags": ["ssd"]}
            ],
            "loads": {"1": 10},
            "shardRules": {"new": {"tags": ["ssd"]}}
        }))
        .unwrap();
        let built = HostState::owned("AllocationState", build(&doc).unwrap());
        assert_eq!(
            least_load_home(&built),
            "b",
            "only b has the tag the rule asks for"
        );
    }

    #[test]
    fn a_region_with_a_bad_shard_is_not_half_added() {
        let s = owned();
        op(&s, "add_region", &[text("a"), text("pekko://s@h:1")]).unwrap();
        op(&s, "add_shard", &[text("a"), text("1")]).unwrap();
        let shards = Tree::Array(vec![text("2"), text("1")]);
        let values = [text("b"), text("pekko://s@h:2"), Tree::Bool(false), shards];
        assert!(op(&s, "add_region", &values).is_err());
        assert_eq!(op(&s, "region", &[text("b")]).unwrap(), Tree::Null);
    }

    #[test]
    fn bad_calls_name_what_is_wrong() {
        let s = owned();
        let e = op(&s, "add_region", &[text("a"), text("not an address")]).unwrap_err();
        assert_eq!(e.status, Status::InvalidArgument);
        assert!(e.message.contains("address"), "{}", e.message);
        let e = op(&s, "set_eligible", &[text("a")]).unwrap_err();
        assert_eq!(
            e.message,
            "AllocationState.set_eligible: eligible is required"
        );
        let e = op(&s, "add_shard", &[text("nowhere"), text("1")]).unwrap_err();
        assert_eq!(e.status, Status::InvalidState);
        let member = Tree::Map(vec![
            (text("address"), text("pekko://s@h:2")),
            (text("status"), text("Sleepy")),
        ]);
        let e = op(&s, "upsert_member", &[member]).unwrap_err();
        assert!(e.message.contains("member.status"), "{}", e.message);
        assert_eq!(
            op(&s, "grow", &[]).unwrap_err().message,
            "AllocationState has no operation \"grow\""
        );
    }

    #[test]
    fn a_view_answers_reads_and_refuses_changes() {
        let st = new(None).unwrap();
        // SAFETY: the view ends below, before `st` goes away.
        let view = unsafe { HostState::lend(&st) };
        assert_eq!(op(&view, "is_view", &[]).unwrap(), Tree::Bool(true));
        assert_eq!(
            op(&view, "self_address", &[]).unwrap(),
            text("shardline://self")
        );
        let e = op(&view, "add_shard", &[text("a"), text("1")]).unwrap_err();
        assert_eq!(e.status, Status::ReentrantCall);
        view.end_view();
    }

    #[test]
    fn a_state_document_builds_and_names_bad_fields() {
        let region = Tree::Map(vec![
            (text("id"), text("a")),
            (text("address"), text("pekko://s@h:1")),
            (text("shards"), Tree::Array(vec![text("1")])),
        ]);
        let init = Tree::Map(vec![(text("regions"), Tree::Array(vec![region]))]);
        let st = build(&init).unwrap();
        assert_eq!(st.shard_count(), 1);
        let bad = Tree::Map(vec![(text("selfAddress"), text("nope"))]);
        let e = build(&bad).unwrap_err();
        assert!(e.message.contains("selfAddress"), "{}", e.message);
        let bad = Tree::Map(vec![(text("regions"), Tree::Array(vec![text("a")]))]);
        let e = build(&bad).unwrap_err();
        assert!(
            e.message.starts_with("AllocationState.build: init "),
            "{}",
            e.message
        );
    }
}
