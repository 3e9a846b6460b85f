# Generated from schema/shardline.schema.json by `BLESS=1 cargo test -p shardline-schema`;
# do not edit. The JSON forms of shardline's inputs, outputs, notices, envelopes, stored
# records and snapshots as TypedDicts; payload bytes are `bytes`.

from typing import Literal, TypedDict, Union


# A load, capacity or budget as given: one number for every dimension, or a number per
# named dimension.
#
# In a load map a missing dimension is 0; in a capacity or budget map it is unbounded.
Amount = Union[
    float,
    dict[str, float],
]


_CandidateRequired = TypedDict(
    "_CandidateRequired",
    {
        "region": str,
        "address": str,
        "shards": int,
    },
)


class Candidate(_CandidateRequired, total=False):
    appVersion: Union[str, None]
    status: Union[str, None]
    utilisation: Union[float, None]


# The lease's fencing token: strictly grows across holders of the coordinator lease.
FencingToken = int


# Per-shard version: bumped by the coordinator on every change of a shard's placement
# (allocation, hand-off start, hand-off end or abort, deallocation).
ShardVersion = int


# What a directive about a shard is worth: newer coordinators win outright, and within one
# coordinator the shard version decides. Regions refuse anything below what they have seen.
Stamp = TypedDict(
    "Stamp",
    {
        "token": FencingToken,
        "version": ShardVersion,
    },
)


# `node` is the region's cluster address; only Up members (or the coordinator's own
# node) are accepted. The offer (capacity, tags, shard cap) is absent when default.
_CommandRegisterRequired = TypedDict(
    "_CommandRegisterRequired",
    {
        "type": Literal["register"],
        "node": str,
    },
)


class CommandRegister(_CommandRegisterRequired, total=False):
    capacity: Union[Amount, None]
    maxShards: Union[int, None]
    tags: list[str]

CommandRegisterProxy = TypedDict(
    "CommandRegisterProxy",
    {
        "type": Literal["registerProxy"],
        "node": str,
    },
)

CommandGetShardHome = TypedDict(
    "CommandGetShardHome",
    {
        "type": Literal["getShardHome"],
        "shard": str,
    },
)

CommandShardStarted = TypedDict(
    "CommandShardStarted",
    {
        "type": Literal["shardStarted"],
        "shard": str,
        "stamp": Stamp,
    },
)

CommandBeginHandOffAck = TypedDict(
    "CommandBeginHandOffAck",
    {
        "type": Literal["beginHandOffAck"],
        "shard": str,
        "stamp": Stamp,
    },
)

CommandShardStopped = TypedDict(
    "CommandShardStopped",
    {
        "type": Literal["shardStopped"],
        "shard": str,
        "stamp": Stamp,
    },
)

CommandGracefulShutdownReq = TypedDict(
    "CommandGracefulShutdownReq",
    {
        "type": Literal["gracefulShutdownReq"],
    },
)

CommandRegionStopped = TypedDict(
    "CommandRegionStopped",
    {
        "type": Literal["regionStopped"],
    },
)

# Remember-entities: an entity started in a shard the sender hosts.
CommandEntityStarted = TypedDict(
    "CommandEntityStarted",
    {
        "type": Literal["entityStarted"],
        "shard": str,
        "entity": str,
    },
)

# Remember-entities: the entity was passivated on purpose and must not be restarted.
CommandEntityPassivated = TypedDict(
    "CommandEntityPassivated",
    {
        "type": Literal["entityPassivated"],
        "shard": str,
        "entity": str,
    },
)

# The host's latest measurement of the sender's shards (see `check_loads`); the
# coordinator smooths it and keeps it for shards the sender hosts.
CommandReportLoads = TypedDict(
    "CommandReportLoads",
    {
        "type": Literal["reportLoads"],
        "loads": dict[str, Amount],
    },
)

# The sender's offer changed; it replaces the whole offer (absent fields: defaults).
_CommandUpdateOfferRequired = TypedDict(
    "_CommandUpdateOfferRequired",
    {
        "type": Literal["updateOffer"],
    },
)


class CommandUpdateOffer(_CommandUpdateOfferRequired, total=False):
    capacity: Union[Amount, None]
    maxShards: Union[int, None]
    tags: list[str]

# Region or proxy -> coordinator. The sender is `Envelope::from`.
Command = Union[
    CommandRegister,
    CommandRegisterProxy,
    CommandGetShardHome,
    CommandShardStarted,
    CommandBeginHandOffAck,
    CommandShardStopped,
    CommandGracefulShutdownReq,
    CommandRegionStopped,
    CommandEntityStarted,
    CommandEntityPassivated,
    CommandReportLoads,
    CommandUpdateOffer,
]


# What a region offers beyond its shard count, for `least-load`: its capacity (a number, or
# a number per load dimension; 1 when absent), its tags, and at most how many shards it
# takes. The default offer is what every Pekko region has, and is left out of messages.
RegionOffer = TypedDict(
    "RegionOffer",
    {
        "capacity": Union[Amount, None],
        "maxShards": Union[int, None],
        "tags": list[str],
    },
    total=False,
)


# Precondition: `region` is not registered.
CoordinatorEventShardRegionRegistered = TypedDict(
    "CoordinatorEventShardRegionRegistered",
    {
        "type": Literal["shardRegionRegistered"],
        "region": str,
        "node": str,
    },
)

# Precondition: `proxy` is not registered.
CoordinatorEventShardRegionProxyRegistered = TypedDict(
    "CoordinatorEventShardRegionProxyRegistered",
    {
        "type": Literal["shardRegionProxyRegistered"],
        "proxy": str,
        "node": str,
    },
)

# Precondition: `region` is registered. Its shards become unallocated.
CoordinatorEventShardRegionTerminated = TypedDict(
    "CoordinatorEventShardRegionTerminated",
    {
        "type": Literal["shardRegionTerminated"],
        "region": str,
    },
)

# Precondition: `proxy` is registered.
CoordinatorEventShardRegionProxyTerminated = TypedDict(
    "CoordinatorEventShardRegionProxyTerminated",
    {
        "type": Literal["shardRegionProxyTerminated"],
        "proxy": str,
    },
)

# Precondition: `region` is registered, `shard` is unallocated, `version` is above the
# shard's last version.
CoordinatorEventShardHomeAllocated = TypedDict(
    "CoordinatorEventShardHomeAllocated",
    {
        "type": Literal["shardHomeAllocated"],
        "shard": str,
        "region": str,
        "version": int,
    },
)

# Precondition: `shard` is allocated, `version` is above the shard's last version.
CoordinatorEventShardHomeDeallocated = TypedDict(
    "CoordinatorEventShardHomeDeallocated",
    {
        "type": Literal["shardHomeDeallocated"],
        "shard": str,
        "version": int,
    },
)

# Remember-entities. Precondition: the entity is not remembered in that shard.
CoordinatorEventEntityRemembered = TypedDict(
    "CoordinatorEventEntityRemembered",
    {
        "type": Literal["entityRemembered"],
        "shard": str,
        "entity": str,
    },
)

# Precondition: the entity is remembered in that shard.
CoordinatorEventEntityForgotten = TypedDict(
    "CoordinatorEventEntityForgotten",
    {
        "type": Literal["entityForgotten"],
        "shard": str,
        "entity": str,
    },
)

# The region's offer (capacity, tags, shard cap) is now `offer`. Precondition: `region`
# is registered.
CoordinatorEventShardRegionOfferChanged = TypedDict(
    "CoordinatorEventShardRegionOfferChanged",
    {
        "type": Literal["shardRegionOfferChanged"],
        "region": str,
        "offer": RegionOffer,
    },
)

# The region is (no longer) draining. Precondition: `region` is registered.
CoordinatorEventShardRegionDrainingChanged = TypedDict(
    "CoordinatorEventShardRegionDrainingChanged",
    {
        "type": Literal["shardRegionDrainingChanged"],
        "region": str,
        "draining": bool,
    },
)

# These shards' smoothed loads are now as given (see `coordinator::loads`). Precondition:
# every load is finite and >= 0.
CoordinatorEventShardLoadsSmoothed = TypedDict(
    "CoordinatorEventShardLoadsSmoothed",
    {
        "type": Literal["shardLoadsSmoothed"],
        "loads": dict[str, Amount],
    },
)

CoordinatorEvent = Union[
    CoordinatorEventShardRegionRegistered,
    CoordinatorEventShardRegionProxyRegistered,
    CoordinatorEventShardRegionTerminated,
    CoordinatorEventShardRegionProxyTerminated,
    CoordinatorEventShardHomeAllocated,
    CoordinatorEventShardHomeDeallocated,
    CoordinatorEventEntityRemembered,
    CoordinatorEventEntityForgotten,
    CoordinatorEventShardRegionOfferChanged,
    CoordinatorEventShardRegionDrainingChanged,
    CoordinatorEventShardLoadsSmoothed,
]


# One stored event; `seq` counts from 1 without gaps across the coordinator's lifetime.
StoredRecord = TypedDict(
    "StoredRecord",
    {
        "seq": int,
        "event": CoordinatorEvent,
    },
)


# What a region offers beyond its shard count, for `least-load`: its capacity (a number, or
# a number per load dimension; 1 when absent), its tags, and at most how many shards it
# takes. The default offer is what every Pekko region has, and is left out of messages.
_SnapshotRegionRequired = TypedDict(
    "_SnapshotRegionRequired",
    {
        "region": str,
        "node": str,
        "shards": list[str],
    },
)


class SnapshotRegion(_SnapshotRegionRequired, total=False):
    capacity: Union[Amount, None]
    draining: bool
    maxShards: Union[int, None]
    tags: list[str]


SnapshotProxy = TypedDict(
    "SnapshotProxy",
    {
        "proxy": str,
        "node": str,
    },
)


# The whole state after event `seq`.
_SnapshotRequired = TypedDict(
    "_SnapshotRequired",
    {
        "seq": int,
        "regions": list[SnapshotRegion],
        "proxies": list[SnapshotProxy],
        "unallocated": list[str],
        "remembered": dict[str, list[str]],
        "versions": dict[str, int],
    },
)


class Snapshot(_SnapshotRequired, total=False):
    loads: dict[str, Amount]


# What a coordinator restores from: the latest snapshot, then the events after it.
_StoredStateRequired = TypedDict(
    "_StoredStateRequired",
    {
        "events": list[StoredRecord],
    },
)


class StoredState(_StoredStateRequired, total=False):
    snapshot: Union[Snapshot, None]


CompletionSent = TypedDict(
    "CompletionSent",
    {
        "type": Literal["sent"],
    },
)

CompletionWritten = TypedDict(
    "CompletionWritten",
    {
        "type": Literal["written"],
    },
)

# A writer with a larger token exists (`highest`, when the store says): for a write or
# a load.
_CompletionFencedRequired = TypedDict(
    "_CompletionFencedRequired",
    {
        "type": Literal["fenced"],
    },
)


class CompletionFenced(_CompletionFencedRequired, total=False):
    highest: Union[FencingToken, None]

CompletionLoaded = TypedDict(
    "CompletionLoaded",
    {
        "type": Literal["loaded"],
        "state": StoredState,
    },
)

CompletionGranted = TypedDict(
    "CompletionGranted",
    {
        "type": Literal["granted"],
        "token": FencingToken,
        "validUntilMs": int,
    },
)

# Another owner holds the lease.
CompletionDenied = TypedDict(
    "CompletionDenied",
    {
        "type": Literal["denied"],
    },
)

CompletionRenewed = TypedDict(
    "CompletionRenewed",
    {
        "type": Literal["renewed"],
        "validUntilMs": int,
    },
)

# The lease is gone.
CompletionLost = TypedDict(
    "CompletionLost",
    {
        "type": Literal["lost"],
    },
)

CompletionReleased = TypedDict(
    "CompletionReleased",
    {
        "type": Literal["released"],
    },
)

CompletionFailed = TypedDict(
    "CompletionFailed",
    {
        "type": Literal["failed"],
    },
)

# How an operation ended. `failed` means the host's call itself failed (the host keeps and
# reports its error); every other form is an answer to the operation named beside it.
Completion = Union[
    CompletionSent,
    CompletionWritten,
    CompletionFenced,
    CompletionLoaded,
    CompletionGranted,
    CompletionDenied,
    CompletionRenewed,
    CompletionLost,
    CompletionReleased,
    CompletionFailed,
]


# What happens when a hand-off does not finish within `handoff_timeout_ms`.
HandOffTimeoutPolicy = Union[
    Literal["keep-owner"],
    Literal["force-reallocate"],
]


CoordinatorConfig = TypedDict(
    "CoordinatorConfig",
    {
        "decisionEvents": bool,
        "handoffResendIntervalMs": int,
        "handoffTimeoutMs": int,
        "handoffTimeoutPolicy": HandOffTimeoutPolicy,
        "leaseRetryIntervalMs": int,
        "minMembers": int,
        "rebalanceEnabled": bool,
        "rebalanceIntervalMs": int,
        "rememberEntities": bool,
        "removalMarginMs": int,
        "shardHomesBatch": int,
        "shardHomesMaxBatches": int,
        "shardStartTimeoutMs": int,
        "snapshotAfter": int,
    },
    total=False,
)


EndpointRegion = TypedDict(
    "EndpointRegion",
    {
        "region": str,
    },
)

# Who a message is from or for. There is one logical coordinator per entity type; the host
# routes `Coordinator` to whichever node currently runs it.
Endpoint = Union[
    Literal["coordinator"],
    EndpointRegion,
]


ShardHome = TypedDict(
    "ShardHome",
    {
        "shard": str,
        "region": str,
        "stamp": Stamp,
    },
)


DirectiveRegisterAck = TypedDict(
    "DirectiveRegisterAck",
    {
        "type": Literal["registerAck"],
        "token": FencingToken,
    },
)

DirectiveShardHome = TypedDict(
    "DirectiveShardHome",
    {
        "type": Literal["shardHome"],
        "shard": str,
        "region": str,
        "stamp": Stamp,
    },
)

DirectiveShardHomes = TypedDict(
    "DirectiveShardHomes",
    {
        "type": Literal["shardHomes"],
        "token": FencingToken,
        "homes": list[ShardHome],
    },
)

# Start hosting `shard`, with the remembered `entities` (empty unless remember-entities).
_DirectiveHostShardRequired = TypedDict(
    "_DirectiveHostShardRequired",
    {
        "type": Literal["hostShard"],
        "shard": str,
        "stamp": Stamp,
    },
)


class DirectiveHostShard(_DirectiveHostShardRequired, total=False):
    entities: list[str]

DirectiveBeginHandOff = TypedDict(
    "DirectiveBeginHandOff",
    {
        "type": Literal["beginHandOff"],
        "shard": str,
        "stamp": Stamp,
    },
)

DirectiveHandOff = TypedDict(
    "DirectiveHandOff",
    {
        "type": Literal["handOff"],
        "shard": str,
        "stamp": Stamp,
    },
)

# Coordinator -> region or proxy. Each carries the coordinator's fencing token, and each
# shard directive the shard's stamp.
Directive = Union[
    DirectiveRegisterAck,
    DirectiveShardHome,
    DirectiveShardHomes,
    DirectiveHostShard,
    DirectiveBeginHandOff,
    DirectiveHandOff,
]


# Region -> region: an entity message on its way to the shard's home.
Forward = TypedDict(
    "Forward",
    {
        "shard": str,
        "entity": str,
        "payload": bytes,
    },
)


MessageCommand = TypedDict(
    "MessageCommand",
    {
        "command": Command,
    },
)

MessageDirective = TypedDict(
    "MessageDirective",
    {
        "directive": Directive,
    },
)

MessageForward = TypedDict(
    "MessageForward",
    {
        "forward": Forward,
    },
)

Message = Union[
    MessageCommand,
    MessageDirective,
    MessageForward,
]


Envelope = TypedDict(
    "Envelope",
    {
        "from": Endpoint,
        "to": Endpoint,
        "message": Message,
    },
)


# Pekko `MemberStatus` (Removed members are simply absent).
MemberStatus = Union[
    Literal["Joining"],
    Literal["WeaklyUp"],
    Literal["Up"],
    Literal["Leaving"],
    Literal["Exiting"],
    Literal["Down"],
]


# A cluster member as an input carries it; omitted (or null) fields take Pekko's defaults.
_MemberInitRequired = TypedDict(
    "_MemberInitRequired",
    {
        "address": str,
    },
)


class MemberInit(_MemberInitRequired, total=False):
    appVersion: Union[str, None]
    dataCenter: Union[str, None]
    status: Union[MemberStatus, None]
    upNumber: Union[int, None]


# A message from a region or proxy.
CoordinatorInputReceive = TypedDict(
    "CoordinatorInputReceive",
    {
        "type": Literal["receive"],
        "envelope": Envelope,
    },
)

# A cluster member joined or changed (status, version, data center).
CoordinatorInputMember = TypedDict(
    "CoordinatorInputMember",
    {
        "type": Literal["member"],
        "member": MemberInit,
    },
)

# A member left the cluster.
CoordinatorInputMemberRemoved = TypedDict(
    "CoordinatorInputMemberRemoved",
    {
        "type": Literal["memberRemoved"],
        "address": str,
    },
)

CoordinatorInputReachability = TypedDict(
    "CoordinatorInputReachability",
    {
        "type": Literal["reachability"],
        "address": str,
        "reachable": bool,
    },
)

# A region or proxy stopped or crashed while its node stays in the cluster.
CoordinatorInputRegionTerminated = TypedDict(
    "CoordinatorInputRegionTerminated",
    {
        "type": Literal["regionTerminated"],
        "region": str,
    },
)

CoordinatorInputLeaseGranted = TypedDict(
    "CoordinatorInputLeaseGranted",
    {
        "type": Literal["leaseGranted"],
        "token": FencingToken,
        "validUntilMs": int,
    },
)

CoordinatorInputLeaseDenied = TypedDict(
    "CoordinatorInputLeaseDenied",
    {
        "type": Literal["leaseDenied"],
    },
)

CoordinatorInputLeaseRenewed = TypedDict(
    "CoordinatorInputLeaseRenewed",
    {
        "type": Literal["leaseRenewed"],
        "token": FencingToken,
        "validUntilMs": int,
    },
)

CoordinatorInputLeaseRenewFailed = TypedDict(
    "CoordinatorInputLeaseRenewFailed",
    {
        "type": Literal["leaseRenewFailed"],
        "token": FencingToken,
    },
)

CoordinatorInputLeaseLost = TypedDict(
    "CoordinatorInputLeaseLost",
    {
        "type": Literal["leaseLost"],
        "token": FencingToken,
    },
)

CoordinatorInputStateLoaded = TypedDict(
    "CoordinatorInputStateLoaded",
    {
        "type": Literal["stateLoaded"],
        "state": StoredState,
    },
)

# `fenced`: the store has seen a larger token.
CoordinatorInputStateLoadFailed = TypedDict(
    "CoordinatorInputStateLoadFailed",
    {
        "type": Literal["stateLoadFailed"],
        "fenced": bool,
    },
)

CoordinatorInputStoreFailed = TypedDict(
    "CoordinatorInputStoreFailed",
    {
        "type": Literal["storeFailed"],
        "fenced": bool,
    },
)

# Full-cluster shutdown is coming: no more rebalancing.
CoordinatorInputPreparingForShutdown = TypedDict(
    "CoordinatorInputPreparingForShutdown",
    {
        "type": Literal["preparingForShutdown"],
    },
)

# Stop coordinating and release the lease.
CoordinatorInputStop = TypedDict(
    "CoordinatorInputStop",
    {
        "type": Literal["stop"],
    },
)

# A planned shutdown of the region is coming: least-load moves its shards away within
# its movement budget and places none there.
CoordinatorInputDrain = TypedDict(
    "CoordinatorInputDrain",
    {
        "type": Literal["drain"],
        "region": str,
    },
)

# Ends a drain: the region takes shards again.
CoordinatorInputUndrain = TypedDict(
    "CoordinatorInputUndrain",
    {
        "type": Literal["undrain"],
        "region": str,
    },
)

# What a coordinator is fed: one input per step.
CoordinatorInput = Union[
    CoordinatorInputReceive,
    CoordinatorInputMember,
    CoordinatorInputMemberRemoved,
    CoordinatorInputReachability,
    CoordinatorInputRegionTerminated,
    CoordinatorInputLeaseGranted,
    CoordinatorInputLeaseDenied,
    CoordinatorInputLeaseRenewed,
    CoordinatorInputLeaseRenewFailed,
    CoordinatorInputLeaseLost,
    CoordinatorInputStateLoaded,
    CoordinatorInputStateLoadFailed,
    CoordinatorInputStoreFailed,
    CoordinatorInputPreparingForShutdown,
    CoordinatorInputStop,
    CoordinatorInputDrain,
    CoordinatorInputUndrain,
]


# One planned move and why.
_MoveNoteRequired = TypedDict(
    "_MoveNoteRequired",
    {
        "shard": str,
        "from": str,
        "to": str,
        "trigger": str,
        "fromBefore": float,
        "fromAfter": float,
        "toBefore": float,
        "toAfter": float,
        "movesLeft": int,
    },
)


class MoveNote(_MoveNoteRequired, total=False):
    loadLeft: Union[float, None]


# A region that could not take a shard.
Rejection = TypedDict(
    "Rejection",
    {
        "shard": str,
        "region": str,
        "reason": str,
    },
)


# The new least-shard strategy waits for the previous round to finish.
SkipShardsInProgress = TypedDict(
    "SkipShardsInProgress",
    {
        "reason": Literal["shardsInProgress"],
        "count": int,
    },
)

# Legacy: as many hand-offs as allowed are running.
SkipTooManyInProgress = TypedDict(
    "SkipTooManyInProgress",
    {
        "reason": Literal["tooManyInProgress"],
        "in_progress": int,
        "max": int,
    },
)

# Members run different app versions (a rolling upgrade).
SkipMixedVersions = TypedDict(
    "SkipMixedVersions",
    {
        "reason": Literal["mixedVersions"],
        "versions": list[str],
    },
)

# Members of the coordinator's data center are unreachable.
SkipUnreachableMembers = TypedDict(
    "SkipUnreachableMembers",
    {
        "reason": Literal["unreachableMembers"],
        "members": list[str],
    },
)

# Members of the coordinator's data center are joining.
SkipJoiningMembers = TypedDict(
    "SkipJoiningMembers",
    {
        "reason": Literal["joiningMembers"],
        "members": list[str],
    },
)

SkipNoRegions = TypedDict(
    "SkipNoRegions",
    {
        "reason": Literal["noRegions"],
    },
)

SkipNoShards = TypedDict(
    "SkipNoShards",
    {
        "reason": Literal["noShards"],
    },
)

# Every region is within the strategy's tolerance.
SkipBalanced = TypedDict(
    "SkipBalanced",
    {
        "reason": Literal["balanced"],
    },
)

# The spread between most and least loaded is not above the threshold.
SkipBelowThreshold = TypedDict(
    "SkipBelowThreshold",
    {
        "reason": Literal["belowThreshold"],
        "difference": int,
        "threshold": int,
    },
)

# The external location source did not answer.
SkipLookupUnavailable = TypedDict(
    "SkipLookupUnavailable",
    {
        "reason": Literal["lookupUnavailable"],
    },
)

# Fewer than two candidates.
SkipNotEnoughCandidates = TypedDict(
    "SkipNotEnoughCandidates",
    {
        "reason": Literal["notEnoughCandidates"],
    },
)

# least-load: above the band, but no single move off the busiest region lowers the
# larger of the two utilisations.
SkipStable = TypedDict(
    "SkipStable",
    {
        "reason": Literal["stable"],
    },
)

# Why a rebalance returned nothing.
Skip = Union[
    SkipShardsInProgress,
    SkipTooManyInProgress,
    SkipMixedVersions,
    SkipUnreachableMembers,
    SkipJoiningMembers,
    SkipNoRegions,
    SkipNoShards,
    SkipBalanced,
    SkipBelowThreshold,
    SkipLookupUnavailable,
    SkipNotEnoughCandidates,
    SkipStable,
]


_ExplanationRequired = TypedDict(
    "_ExplanationRequired",
    {
        "strategy": str,
        "op": str,
        "summary": str,
    },
)


class Explanation(_ExplanationRequired, total=False):
    bandCeiling: Union[float, None]
    candidates: list[Candidate]
    fluidOptimum: Union[float, None]
    limit: Union[int, None]
    moves: list[MoveNote]
    optimal: Union[int, None]
    phase: Union[int, None]
    rejected: list[Rejection]
    skipped: Union[Skip, None]


CoordinatorNoticeActive = TypedDict(
    "CoordinatorNoticeActive",
    {
        "type": Literal["active"],
        "token": FencingToken,
    },
)

CoordinatorNoticeSteppedDown = TypedDict(
    "CoordinatorNoticeSteppedDown",
    {
        "type": Literal["steppedDown"],
        "token": FencingToken,
        "reason": str,
    },
)

CoordinatorNoticeRegisterRefused = TypedDict(
    "CoordinatorNoticeRegisterRefused",
    {
        "type": Literal["registerRefused"],
        "region": str,
        "reason": str,
    },
)

CoordinatorNoticeHandOffStarted = TypedDict(
    "CoordinatorNoticeHandOffStarted",
    {
        "type": Literal["handOffStarted"],
        "shard": str,
        "from": str,
        "rebalance": bool,
    },
)

CoordinatorNoticeHandOffCompleted = TypedDict(
    "CoordinatorNoticeHandOffCompleted",
    {
        "type": Literal["handOffCompleted"],
        "shard": str,
        "from": str,
    },
)

CoordinatorNoticeHandOffTimedOut = TypedDict(
    "CoordinatorNoticeHandOffTimedOut",
    {
        "type": Literal["handOffTimedOut"],
        "shard": str,
        "from": str,
        "policy": HandOffTimeoutPolicy,
    },
)

CoordinatorNoticeAllocationFailed = TypedDict(
    "CoordinatorNoticeAllocationFailed",
    {
        "type": Literal["allocationFailed"],
        "shard": str,
        "reason": str,
    },
)

# A shard got a home: its first, or a new one after a hand-off. With `decisionEvents`.
_CoordinatorNoticeAllocatedRequired = TypedDict(
    "_CoordinatorNoticeAllocatedRequired",
    {
        "type": Literal["allocated"],
        "shard": str,
        "region": str,
        "explanation": Explanation,
    },
)


class CoordinatorNoticeAllocated(_CoordinatorNoticeAllocatedRequired, total=False):
    requester: Union[str, None]

# One rebalance round: the shards it hands off (none when it skipped) and why. With
# `decisionEvents`.
CoordinatorNoticeRebalanceRound = TypedDict(
    "CoordinatorNoticeRebalanceRound",
    {
        "type": Literal["rebalanceRound"],
        "shards": list[str],
        "explanation": Explanation,
    },
)

# A region's command was malformed and ignored as a whole (`reportLoads`,
# `updateOffer`).
CoordinatorNoticeCommandRefused = TypedDict(
    "CoordinatorNoticeCommandRefused",
    {
        "type": Literal["commandRefused"],
        "region": str,
        "command": str,
        "reason": str,
    },
)

# Things worth logging or asserting on; carrying them out is optional.
# The variants marked `x-severity: warning` report something refused, failed or lost; the
# schema carries the mark, so every language's logging bridge logs the same ones as warnings.
CoordinatorNotice = Union[
    CoordinatorNoticeActive,
    CoordinatorNoticeSteppedDown,
    CoordinatorNoticeRegisterRefused,
    CoordinatorNoticeHandOffStarted,
    CoordinatorNoticeHandOffCompleted,
    CoordinatorNoticeHandOffTimedOut,
    CoordinatorNoticeAllocationFailed,
    CoordinatorNoticeAllocated,
    CoordinatorNoticeRebalanceRound,
    CoordinatorNoticeCommandRefused,
]


LeaseRequestAcquire = TypedDict(
    "LeaseRequestAcquire",
    {
        "type": Literal["acquire"],
    },
)

LeaseRequestRenew = TypedDict(
    "LeaseRequestRenew",
    {
        "type": Literal["renew"],
        "token": FencingToken,
    },
)

LeaseRequestRelease = TypedDict(
    "LeaseRequestRelease",
    {
        "type": Literal["release"],
        "token": FencingToken,
    },
)

LeaseRequest = Union[
    LeaseRequestAcquire,
    LeaseRequestRenew,
    LeaseRequestRelease,
]


CoordinatorOutputSend = TypedDict(
    "CoordinatorOutputSend",
    {
        "type": Literal["send"],
        "envelope": Envelope,
    },
)

# Write-ahead: durable before any later output.
CoordinatorOutputPersist = TypedDict(
    "CoordinatorOutputPersist",
    {
        "type": Literal["persist"],
        "token": FencingToken,
        "record": StoredRecord,
    },
)

CoordinatorOutputSaveSnapshot = TypedDict(
    "CoordinatorOutputSaveSnapshot",
    {
        "type": Literal["saveSnapshot"],
        "token": FencingToken,
        "snapshot": Snapshot,
    },
)

CoordinatorOutputLease = TypedDict(
    "CoordinatorOutputLease",
    {
        "type": Literal["lease"],
        "request": LeaseRequest,
    },
)

# Load the stored state with this token (fencing older writers), then feed
# `CoordinatorInput::StateLoaded` or `CoordinatorInput::StateLoadFailed`.
CoordinatorOutputLoadState = TypedDict(
    "CoordinatorOutputLoadState",
    {
        "type": Literal["loadState"],
        "token": FencingToken,
    },
)

CoordinatorOutputNotice = TypedDict(
    "CoordinatorOutputNotice",
    {
        "type": Literal["notice"],
        "notice": CoordinatorNotice,
    },
)

CoordinatorOutput = Union[
    CoordinatorOutputSend,
    CoordinatorOutputPersist,
    CoordinatorOutputSaveSnapshot,
    CoordinatorOutputLease,
    CoordinatorOutputLoadState,
    CoordinatorOutputNotice,
]


CoordinatorPhase = Union[
    Literal["idle"],
    Literal["acquiringLease"],
    Literal["loading"],
    Literal["active"],
    Literal["stopped"],
]


# A lease the coordinator was granted.
LeaseGrant = TypedDict(
    "LeaseGrant",
    {
        "token": FencingToken,
        "validUntilMs": int,
    },
)


MetricKind = Union[
    Literal["gauge"],
    Literal["counter"],
]


# One exported value.
_MetricRequired = TypedDict(
    "_MetricRequired",
    {
        "name": str,
        "kind": MetricKind,
        "value": int,
        "description": str,
    },
)


class Metric(_MetricRequired, total=False):
    attributes: dict[str, str]


# Complete with `sent` (or `failed`; delivery may be lossy anyway).
OperationSend = TypedDict(
    "OperationSend",
    {
        "type": Literal["send"],
        "envelope": Envelope,
    },
)

# Append to the store under `token`: `written`, `fenced` or `failed`.
OperationAppend = TypedDict(
    "OperationAppend",
    {
        "type": Literal["append"],
        "token": FencingToken,
        "record": StoredRecord,
    },
)

# Replace the stored snapshot under `token`: `written`, `fenced` or `failed`.
OperationSaveSnapshot = TypedDict(
    "OperationSaveSnapshot",
    {
        "type": Literal["saveSnapshot"],
        "token": FencingToken,
        "snapshot": Snapshot,
    },
)

# Load the stored state, fencing writers below `token`: `loaded`, `fenced` or `failed`.
OperationLoad = TypedDict(
    "OperationLoad",
    {
        "type": Literal["load"],
        "token": FencingToken,
    },
)

# `granted`, `denied` or `failed`.
OperationAcquire = TypedDict(
    "OperationAcquire",
    {
        "type": Literal["acquire"],
    },
)

# `renewed`, `lost` or `failed`.
OperationRenew = TypedDict(
    "OperationRenew",
    {
        "type": Literal["renew"],
        "token": FencingToken,
    },
)

# `released` or `failed`.
OperationRelease = TypedDict(
    "OperationRelease",
    {
        "type": Literal["release"],
        "token": FencingToken,
    },
)

# One thing the host must do for the coordinator, then `CoordinatorPipeline::complete`.
# JSON: `{"type": "send", "envelope"}`, `{"type": "append", "token", "record"}`, ...
Operation = Union[
    OperationSend,
    OperationAppend,
    OperationSaveSnapshot,
    OperationLoad,
    OperationAcquire,
    OperationRenew,
    OperationRelease,
]


RegionConfig = TypedDict(
    "RegionConfig",
    {
        "bufferCapacity": int,
        "offer": RegionOffer,
        "proxy": bool,
        "rememberEntities": bool,
        "retryIntervalMs": int,
    },
    total=False,
)


RegionInputReceive = TypedDict(
    "RegionInputReceive",
    {
        "type": Literal["receive"],
        "envelope": Envelope,
    },
)

# The coordinator moved (or may have): register again.
RegionInputCoordinatorChanged = TypedDict(
    "RegionInputCoordinatorChanged",
    {
        "type": Literal["coordinatorChanged"],
    },
)

# Another region died: forget the homes it had.
RegionInputRegionTerminated = TypedDict(
    "RegionInputRegionTerminated",
    {
        "type": Literal["regionTerminated"],
        "region": str,
    },
)

# The host finished stopping a shard's entities.
RegionInputShardStopped = TypedDict(
    "RegionInputShardStopped",
    {
        "type": Literal["shardStopped"],
        "shard": str,
    },
)

# An entity was passivated on purpose.
RegionInputEntityPassivated = TypedDict(
    "RegionInputEntityPassivated",
    {
        "type": Literal["entityPassivated"],
        "shard": str,
        "entity": str,
    },
)

# Hand every shard off, then stop.
RegionInputGracefulShutdown = TypedDict(
    "RegionInputGracefulShutdown",
    {
        "type": Literal["gracefulShutdown"],
    },
)

# The host measured its shards' loads: each a number, or a number per dimension (all
# the same way), finite and >= 0.
RegionInputReportLoads = TypedDict(
    "RegionInputReportLoads",
    {
        "type": Literal["reportLoads"],
        "loads": dict[str, Amount],
    },
)

# The region's capacity, tags or shard cap changed; replaces the whole offer.
RegionInputUpdateOffer = TypedDict(
    "RegionInputUpdateOffer",
    {
        "type": Literal["updateOffer"],
        "offer": RegionOffer,
    },
)

# What a region is fed: one input per step.
RegionInput = Union[
    RegionInputReceive,
    RegionInputCoordinatorChanged,
    RegionInputRegionTerminated,
    RegionInputShardStopped,
    RegionInputEntityPassivated,
    RegionInputGracefulShutdown,
    RegionInputReportLoads,
    RegionInputUpdateOffer,
]


RegionNoticeRegistered = TypedDict(
    "RegionNoticeRegistered",
    {
        "type": Literal["registered"],
        "token": FencingToken,
    },
)

# A directive older than what the region has seen was ignored.
_RegionNoticeDirectiveRefusedRequired = TypedDict(
    "_RegionNoticeDirectiveRefusedRequired",
    {
        "type": Literal["directiveRefused"],
        "directive": str,
        "token": FencingToken,
    },
)


class RegionNoticeDirectiveRefused(_RegionNoticeDirectiveRefusedRequired, total=False):
    seen: Union[Stamp, None]
    shard: Union[str, None]

# An input was malformed and ignored (`reportLoads`, `updateOffer`).
RegionNoticeInputRefused = TypedDict(
    "RegionNoticeInputRefused",
    {
        "type": Literal["inputRefused"],
        "input": str,
        "reason": str,
    },
)

# Things worth logging; as with the coordinator's notices, the variants marked
# `x-severity: warning` report something refused and are logged as warnings.
RegionNotice = Union[
    RegionNoticeRegistered,
    RegionNoticeDirectiveRefused,
    RegionNoticeInputRefused,
]


RegionOutputSend = TypedDict(
    "RegionOutputSend",
    {
        "type": Literal["send"],
        "envelope": Envelope,
    },
)

# Start hosting a shard, with the entities to start right away (remember-entities).
RegionOutputStartShard = TypedDict(
    "RegionOutputStartShard",
    {
        "type": Literal["startShard"],
        "shard": str,
        "entities": list[str],
    },
)

# More remembered entities for a shard already running.
RegionOutputStartEntities = TypedDict(
    "RegionOutputStartEntities",
    {
        "type": Literal["startEntities"],
        "shard": str,
        "entities": list[str],
    },
)

RegionOutputDeliver = TypedDict(
    "RegionOutputDeliver",
    {
        "type": Literal["deliver"],
        "shard": str,
        "entity": str,
        "payload": bytes,
    },
)

# Stop every entity of the shard, then report `RegionInput::ShardStopped`.
RegionOutputStopShard = TypedDict(
    "RegionOutputStopShard",
    {
        "type": Literal["stopShard"],
        "shard": str,
    },
)

# A message forwarded here by another region that could not be kept.
RegionOutputUndeliverable = TypedDict(
    "RegionOutputUndeliverable",
    {
        "type": Literal["undeliverable"],
        "shard": str,
        "entity": str,
        "payload": bytes,
        "reason": str,
    },
)

# Graceful shutdown finished: nothing hosted, nothing buffered.
RegionOutputStopped = TypedDict(
    "RegionOutputStopped",
    {
        "type": Literal["stopped"],
    },
)

RegionOutputNotice = TypedDict(
    "RegionOutputNotice",
    {
        "type": Literal["notice"],
        "notice": RegionNotice,
    },
)

RegionOutput = Union[
    RegionOutputSend,
    RegionOutputStartShard,
    RegionOutputStartEntities,
    RegionOutputDeliver,
    RegionOutputStopShard,
    RegionOutputUndeliverable,
    RegionOutputStopped,
    RegionOutputNotice,
]


WriteOutcomeWritten = TypedDict(
    "WriteOutcomeWritten",
    {
        "outcome": Literal["written"],
    },
)

# A writer with a larger token exists; this writer must stop.
WriteOutcomeFenced = TypedDict(
    "WriteOutcomeFenced",
    {
        "outcome": Literal["fenced"],
        "highest": FencingToken,
    },
)

WriteOutcome = Union[
    WriteOutcomeWritten,
    WriteOutcomeFenced,
]


#: The notice types the core marks as warnings: something refused, failed or lost.
WARNING_NOTICES = frozenset({
    "allocationFailed",
    "commandRefused",
    "directiveRefused",
    "handOffTimedOut",
    "inputRefused",
    "registerRefused",
    "steppedDown",
})


__all__ = [
    "Amount",
    "Candidate",
    "Command",
    "CommandBeginHandOffAck",
    "CommandEntityPassivated",
    "CommandEntityStarted",
    "CommandGetShardHome",
    "CommandGracefulShutdownReq",
    "CommandRegionStopped",
    "CommandRegister",
    "CommandRegisterProxy",
    "CommandReportLoads",
    "CommandShardStarted",
    "CommandShardStopped",
    "CommandUpdateOffer",
    "Completion",
    "CompletionDenied",
    "CompletionFailed",
    "CompletionFenced",
    "CompletionGranted",
    "CompletionLoaded",
    "CompletionLost",
    "CompletionReleased",
    "CompletionRenewed",
    "CompletionSent",
    "CompletionWritten",
    "CoordinatorConfig",
    "CoordinatorEvent",
    "CoordinatorEventEntityForgotten",
    "CoordinatorEventEntityRemembered",
    "CoordinatorEventShardHomeAllocated",
    "CoordinatorEventShardHomeDeallocated",
    "CoordinatorEventShardLoadsSmoothed",
    "CoordinatorEventShardRegionDrainingChanged",
    "CoordinatorEventShardRegionOfferChanged",
    "CoordinatorEventShardRegionProxyRegistered",
    "CoordinatorEventShardRegionProxyTerminated",
    "CoordinatorEventShardRegionRegistered",
    "CoordinatorEventShardRegionTerminated",
    "CoordinatorInput",
    "CoordinatorInputDrain",
    "CoordinatorInputLeaseDenied",
    "CoordinatorInputLeaseGranted",
    "CoordinatorInputLeaseLost",
    "CoordinatorInputLeaseRenewFailed",
    "CoordinatorInputLeaseRenewed",
    "CoordinatorInputMember",
    "CoordinatorInputMemberRemoved",
    "CoordinatorInputPreparingForShutdown",
    "CoordinatorInputReachability",
    "CoordinatorInputReceive",
    "CoordinatorInputRegionTerminated",
    "CoordinatorInputStateLoadFailed",
    "CoordinatorInputStateLoaded",
    "CoordinatorInputStop",
    "CoordinatorInputStoreFailed",
    "CoordinatorInputUndrain",
    "CoordinatorNotice",
    "CoordinatorNoticeActive",
    "CoordinatorNoticeAllocated",
    "CoordinatorNoticeAllocationFailed",
    "CoordinatorNoticeCommandRefused",
    "CoordinatorNoticeHandOffCompleted",
    "CoordinatorNoticeHandOffStarted",
    "CoordinatorNoticeHandOffTimedOut",
    "CoordinatorNoticeRebalanceRound",
    "CoordinatorNoticeRegisterRefused",
    "CoordinatorNoticeSteppedDown",
    "CoordinatorOutput",
    "CoordinatorOutputLease",
    "CoordinatorOutputLoadState",
    "CoordinatorOutputNotice",
    "CoordinatorOutputPersist",
    "CoordinatorOutputSaveSnapshot",
    "CoordinatorOutputSend",
    "CoordinatorPhase",
    "Directive",
    "DirectiveBeginHandOff",
    "DirectiveHandOff",
    "DirectiveHostShard",
    "DirectiveRegisterAck",
    "DirectiveShardHome",
    "DirectiveShardHomes",
    "Endpoint",
    "EndpointRegion",
    "Envelope",
    "Explanation",
    "FencingToken",
    "Forward",
    "HandOffTimeoutPolicy",
    "LeaseGrant",
    "LeaseRequest",
    "LeaseRequestAcquire",
    "LeaseRequestRelease",
    "LeaseRequestRenew",
    "MemberInit",
    "MemberStatus",
    "Message",
    "MessageCommand",
    "MessageDirective",
    "MessageForward",
    "Metric",
    "MetricKind",
    "MoveNote",
    "Operation",
    "OperationAcquire",
    "OperationAppend",
    "OperationLoad",
    "OperationRelease",
    "OperationRenew",
    "OperationSaveSnapshot",
    "OperationSend",
    "RegionConfig",
    "RegionInput",
    "RegionInputCoordinatorChanged",
    "RegionInputEntityPassivated",
    "RegionInputGracefulShutdown",
    "RegionInputReceive",
    "RegionInputRegionTerminated",
    "RegionInputReportLoads",
    "RegionInputShardStopped",
    "RegionInputUpdateOffer",
    "RegionNotice",
    "RegionNoticeDirectiveRefused",
    "RegionNoticeInputRefused",
    "RegionNoticeRegistered",
    "RegionOffer",
    "RegionOutput",
    "RegionOutputDeliver",
    "RegionOutputNotice",
    "RegionOutputSend",
    "RegionOutputStartEntities",
    "RegionOutputStartShard",
    "RegionOutputStopShard",
    "RegionOutputStopped",
    "RegionOutputUndeliverable",
    "Rejection",
    "ShardHome",
    "ShardVersion",
    "Skip",
    "SkipBalanced",
    "SkipBelowThreshold",
    "SkipJoiningMembers",
    "SkipLookupUnavailable",
    "SkipMixedVersions",
    "SkipNoRegions",
    "SkipNoShards",
    "SkipNotEnoughCandidates",
    "SkipShardsInProgress",
    "SkipStable",
    "SkipTooManyInProgress",
    "SkipUnreachableMembers",
    "Snapshot",
    "SnapshotProxy",
    "SnapshotRegion",
    "Stamp",
    "StoredRecord",
    "StoredState",
    "WARNING_NOTICES",
    "WriteOutcome",
    "WriteOutcomeFenced",
    "WriteOutcomeWritten",
]
