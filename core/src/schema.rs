//! The JSON Schema of every wire form: step inputs and outputs, notices, protocol envelopes,
//! stored records and snapshots, lease grants, and the machines' configurations. It is the one
//! contract every language reads; `schema/` turns it into each binding's types.
//!
//! Most of it is derived by `schemars` from the same serde attributes that make the JSON, so
//! the schema says what serde does. Only forms with a hand-written serde impl are described here
//! by hand: payload bytes (base64 text) and the step inputs, whose flat reader accepts exactly
//! the fields of the variant named by `type` (see `crate::protocol::json`).

use std::borrow::Cow;
use std::collections::BTreeMap;

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde_json::{json, Value};

use crate::coordinator::{
    CoordinatorConfig, CoordinatorInput, CoordinatorOutput, LeaseGrant, Phase, StoredState,
};
use crate::host::{Completion, Operation, WriteOutcome};
use crate::metrics::Metric;
use crate::model::Amount;
use crate::model::MemberStatus;
use crate::protocol::{EntityId, Envelope, FencingToken, RegionId, RegionOffer, ShardId};
use crate::region::{RegionConfig, RegionInput, RegionOutput};

/// The schema document: `$defs` holds every wire form by name.
pub fn wire_schema() -> Value {
    let mut g = SchemaSettings::draft2020_12().into_generator();
    // The roots; everything they refer to is defined too.
    g.subschema_for::<CoordinatorInput>();
    g.subschema_for::<CoordinatorOutput>();
    g.subschema_for::<Phase>();
    g.subschema_for::<RegionInput>();
    g.subschema_for::<RegionOutput>();
    g.subschema_for::<CoordinatorConfig>();
    g.subschema_for::<RegionConfig>();
    g.subschema_for::<LeaseGrant>();
    g.subschema_for::<WriteOutcome>();
    g.subschema_for::<Operation>();
    g.subschema_for::<Completion>();
    g.subschema_for::<Metric>();
    let defs = g.take_definitions(true);
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "shardline wire contract",
        "description": "The JSON forms of shardline's step inputs and outputs, notices, protocol envelopes, stored records and snapshots. Generated from the core's types (cargo test -p shardline-schema); do not edit.",
        "$defs": defs,
    })
}

/// A cluster member as an input carries it; omitted (or null) fields take Pekko's defaults.
#[allow(dead_code)] // describes a form; never built
#[derive(JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct MemberInit {
    /// `protocol://system@host:port`, or actor-ts's `system@host:port`.
    address: String,
    /// Up when omitted.
    status: Option<MemberStatus>,
    /// 0.0.0 when omitted.
    app_version: Option<String>,
    /// "default" when omitted.
    data_center: Option<String>,
    /// Lower is older (Pekko `upNumber`); i32::MAX when omitted.
    up_number: Option<i32>,
}

// The form of [`CoordinatorInput`], whose serde impl is in `crate::coordinator::json`.
/// What a coordinator is fed: one input per step.
#[allow(dead_code)]
#[derive(JsonSchema)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase",
    deny_unknown_fields
)]
#[schemars(rename = "CoordinatorInput")]
enum CoordinatorInputForm {
    /// A message from a region or proxy.
    Receive {
        envelope: Envelope,
    },
    /// A cluster member joined or changed (status, version, data center).
    Member {
        member: MemberInit,
    },
    /// A member left the cluster.
    MemberRemoved {
        address: String,
    },
    Reachability {
        address: String,
        reachable: bool,
    },
    /// A region or proxy stopped or crashed while its node stays in the cluster.
    RegionTerminated {
        region: RegionId,
    },
    LeaseGranted {
        token: FencingToken,
        valid_until_ms: u64,
    },
    LeaseDenied,
    LeaseRenewed {
        token: FencingToken,
        valid_until_ms: u64,
    },
    LeaseRenewFailed {
        token: FencingToken,
    },
    LeaseLost {
        token: FencingToken,
    },
    StateLoaded {
        state: StoredState,
    },
    /// `fenced`: the store has seen a larger token.
    StateLoadFailed {
        fenced: bool,
    },
    StoreFailed {
        fenced: bool,
    },
    /// Full-cluster shutdown is coming: no more rebalancing.
    PreparingForShutdown,
    /// Stop coordinating and release the lease.
    Stop,
    /// A planned shutdown of the region is coming: least-load moves its shards away within
    /// its movement budget and places none there.
    Drain {
        region: RegionId,
    },
    /// Ends a drain: the region takes shards again.
    Undrain {
        region: RegionId,
    },
}

impl JsonSchema for CoordinatorInput {
    fn schema_name() -> Cow<'static, str> {
        CoordinatorInputForm::schema_name()
    }

    fn json_schema(g: &mut SchemaGenerator) -> Schema {
        CoordinatorInputForm::json_schema(g)
    }
}

// The form of [`RegionInput`], whose serde impl is in `crate::region::json`.
/// What a region is fed: one input per step.
#[allow(dead_code)]
#[derive(JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase", deny_unknown_fields)]
#[schemars(rename = "RegionInput")]
enum RegionInputForm {
    Receive {
        envelope: Envelope,
    },
    /// The coordinator moved (or may have): register again.
    CoordinatorChanged,
    /// Another region died: forget the homes it had.
    RegionTerminated {
        region: RegionId,
    },
    /// The host finished stopping a shard's entities.
    ShardStopped {
        shard: ShardId,
    },
    /// An entity was passivated on purpose.
    EntityPassivated {
        shard: ShardId,
        entity: EntityId,
    },
    /// Hand every shard off, then stop.
    GracefulShutdown,
    /// The host measured its shards' loads: each a number, or a number per dimension (all
    /// the same way), finite and >= 0.
    ReportLoads {
        loads: BTreeMap<ShardId, Amount>,
    },
    /// The region's capacity, tags or shard cap changed; replaces the whole offer.
    UpdateOffer {
        offer: RegionOffer,
    },
}

impl JsonSchema for RegionInput {
    fn schema_name() -> Cow<'static, str> {
        RegionInputForm::schema_name()
    }

    fn json_schema(g: &mut SchemaGenerator) -> Schema {
        RegionInputForm::json_schema(g)
    }
}

#[cfg(test)]
mod tests;
