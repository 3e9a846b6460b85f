//! The region's inputs as JSON documents (`crate::protocol::json` describes the form).

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::RegionInput;
use crate::protocol::json::{from_str, from_value, need, no_more, object_text, object_value};
use std::collections::BTreeMap;

use crate::model::Amount;
use crate::protocol::{check_loads, EntityId, Envelope, RegionId, RegionOffer, ShardId};
use crate::Result;

/// Serde adapter for the notice output (see `crate::protocol::nested_field`).
pub(crate) mod nested {
    crate::protocol::nested_field!(notice, "notice", crate::region::RegionNotice);
}

impl RegionInput {
    /// A region input from JSON text (see [`from_str`] for the errors).
    pub fn from_json(text: &str, name: &str) -> Result<RegionInput> {
        object_text(text, name)?;
        from_str(text, name)
    }

    /// A region input from a JSON value.
    pub fn from_json_value(value: &Value, name: &str) -> Result<RegionInput> {
        object_value(value, name)?;
        from_value(value, name)
    }
}

pub(crate) const REGION_KINDS: &[&str] = &[
    "receive",
    "coordinatorChanged",
    "regionTerminated",
    "shardStopped",
    "entityPassivated",
    "gracefulShutdown",
    "reportLoads",
    "updateOffer",
];

// ---- region inputs --------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum RegionKind {
    Receive,
    CoordinatorChanged,
    RegionTerminated,
    ShardStopped,
    EntityPassivated,
    GracefulShutdown,
    ReportLoads,
    UpdateOffer,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RegionInputDoc {
    #[serde(rename = "type")]
    kind: RegionKind,
    envelope: Option<Envelope>,
    region: Option<RegionId>,
    shard: Option<ShardId>,
    entity: Option<EntityId>,
    loads: Option<BTreeMap<ShardId, Amount>>,
    offer: Option<RegionOffer>,
}

impl RegionInputDoc {
    fn into_input<E: serde::de::Error>(mut self) -> Result<RegionInput, E> {
        use RegionKind as K;
        let k = REGION_KINDS[self.kind as usize];
        let input = match self.kind {
            K::Receive => RegionInput::Receive(need(&mut self.envelope, "envelope", k)?),
            K::CoordinatorChanged => RegionInput::CoordinatorChanged,
            K::RegionTerminated => RegionInput::RegionTerminated {
                region: need(&mut self.region, "region", k)?,
            },
            K::ShardStopped => RegionInput::ShardStopped {
                shard: need(&mut self.shard, "shard", k)?,
            },
            K::EntityPassivated => RegionInput::EntityPassivated {
                shard: need(&mut self.shard, "shard", k)?,
                entity: need(&mut self.entity, "entity", k)?,
            },
            K::GracefulShutdown => RegionInput::GracefulShutdown,
            // Checked here too, so a host hears what is wrong from the call that fed it.
            K::ReportLoads => {
                let loads = need(&mut self.loads, "loads", k)?;
                check_loads(&loads).map_err(E::custom)?;
                RegionInput::ReportLoads { loads }
            }
            K::UpdateOffer => {
                let offer = need(&mut self.offer, "offer", k)?;
                offer.check().map_err(|e| E::custom(e.context("offer")))?;
                RegionInput::UpdateOffer { offer }
            }
        };
        no_more(
            &[
                ("envelope", self.envelope.is_some()),
                ("region", self.region.is_some()),
                ("shard", self.shard.is_some()),
                ("entity", self.entity.is_some()),
                ("loads", self.loads.is_some()),
                ("offer", self.offer.is_some()),
            ],
            k,
        )?;
        Ok(input)
    }
}

impl<'de> Deserialize<'de> for RegionInput {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<RegionInput, D::Error> {
        RegionInputDoc::deserialize(d)?.into_input()
    }
}

#[derive(Serialize, Default)]
struct RegionInputOut<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    envelope: Option<&'a Envelope>,
    #[serde(skip_serializing_if = "Option::is_none")]
    region: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    shard: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    entity: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    loads: Option<&'a BTreeMap<ShardId, Amount>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    offer: Option<&'a RegionOffer>,
}

impl Serialize for RegionInput {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let kind = |k: RegionKind| REGION_KINDS[k as usize];
        let o = match self {
            RegionInput::Receive(e) => RegionInputOut {
                kind: kind(RegionKind::Receive),
                envelope: Some(e),
                ..RegionInputOut::default()
            },
            RegionInput::CoordinatorChanged => RegionInputOut {
                kind: kind(RegionKind::CoordinatorChanged),
                ..RegionInputOut::default()
            },
            RegionInput::RegionTerminated { region } => RegionInputOut {
                kind: kind(RegionKind::RegionTerminated),
                region: Some(region),
                ..RegionInputOut::default()
            },
            RegionInput::ShardStopped { shard } => RegionInputOut {
                kind: kind(RegionKind::ShardStopped),
                shard: Some(shard),
                ..RegionInputOut::default()
            },
            RegionInput::EntityPassivated { shard, entity } => RegionInputOut {
                kind: kind(RegionKind::EntityPassivated),
                shard: Some(shard),
                entity: Some(entity),
                ..RegionInputOut::default()
            },
            RegionInput::GracefulShutdown => RegionInputOut {
                kind: kind(RegionKind::GracefulShutdown),
                ..RegionInputOut::default()
            },
            RegionInput::ReportLoads { loads } => RegionInputOut {
                kind: kind(RegionKind::ReportLoads),
                loads: Some(loads),
                ..RegionInputOut::default()
            },
            RegionInput::UpdateOffer { offer } => RegionInputOut {
                kind: kind(RegionKind::UpdateOffer),
                offer: Some(offer),
                ..RegionInputOut::default()
            },
        };
        o.serialize(s)
    }
}
