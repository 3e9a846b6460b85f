// Generated from schema/shardline.schema.json by `BLESS=1 cargo test -p shardline-schema`;
// do not edit.
package org.shardline;

/**
 * The names the JSON forms use: the {@code type} (or {@code outcome}) of every input, output,
 * notice, command, directive and stored event, and the values of every enumeration, as every
 * binding spells them.
 */
public final class Wire {
  private Wire() {}

  /** The {@code type} values of {@code Command}. */
  public static final class Command {
    private Command() {}

    /**
     * {@code node} is the region's cluster address; only Up members (or the coordinator's own
     * node) are accepted. The offer (capacity, tags, shard cap) is absent when default.
     */
    public static final String REGISTER = "register";
    public static final String REGISTER_PROXY = "registerProxy";
    public static final String GET_SHARD_HOME = "getShardHome";
    public static final String SHARD_STARTED = "shardStarted";
    public static final String BEGIN_HAND_OFF_ACK = "beginHandOffAck";
    public static final String SHARD_STOPPED = "shardStopped";
    public static final String GRACEFUL_SHUTDOWN_REQ = "gracefulShutdownReq";
    public static final String REGION_STOPPED = "regionStopped";
    /** Remember-entities: an entity started in a shard the sender hosts. */
    public static final String ENTITY_STARTED = "entityStarted";
    /** Remember-entities: the entity was passivated on purpose and must not be restarted. */
    public static final String ENTITY_PASSIVATED = "entityPassivated";
    /**
     * The host's latest measurement of the sender's shards (see {@code check_loads}); the
     * coordinator smooths it and keeps it for shards the sender hosts.
     */
    public static final String REPORT_LOADS = "reportLoads";
    /** The sender's offer changed; it replaces the whole offer (absent fields: defaults). */
    public static final String UPDATE_OFFER = "updateOffer";
  }

  /** The {@code type} values of {@code Completion}. */
  public static final class Completion {
    private Completion() {}

    public static final String SENT = "sent";
    public static final String WRITTEN = "written";
    /**
     * A writer with a larger token exists ({@code highest}, when the store says): for a write or
     * a load.
     */
    public static final String FENCED = "fenced";
    public static final String LOADED = "loaded";
    public static final String GRANTED = "granted";
    /** Another owner holds the lease. */
    public static final String DENIED = "denied";
    public static final String RENEWED = "renewed";
    /** The lease is gone. */
    public static final String LOST = "lost";
    public static final String RELEASED = "released";
    public static final String FAILED = "failed";
  }

  /** The {@code type} values of {@code CoordinatorEvent}. */
  public static final class CoordinatorEvent {
    private CoordinatorEvent() {}

    /** Precondition: {@code region} is not registered. */
    public static final String SHARD_REGION_REGISTERED = "shardRegionRegistered";
    /** Precondition: {@code proxy} is not registered. */
    public static final String SHARD_REGION_PROXY_REGISTERED = "shardRegionProxyRegistered";
    /** Precondition: {@code region} is registered. Its shards become unallocated. */
    public static final String SHARD_REGION_TERMINATED = "shardRegionTerminated";
    /** Precondition: {@code proxy} is registered. */
    public static final String SHARD_REGION_PROXY_TERMINATED = "shardRegionProxyTerminated";
    /**
     * Precondition: {@code region} is registered, {@code shard} is unallocated, {@code version} is above the
     * shard's last version.
     */
    public static final String SHARD_HOME_ALLOCATED = "shardHomeAllocated";
    /** Precondition: {@code shard} is allocated, {@code version} is above the shard's last version. */
    public static final String SHARD_HOME_DEALLOCATED = "shardHomeDeallocated";
    /** Remember-entities. Precondition: the entity is not remembered in that shard. */
    public static final String ENTITY_REMEMBERED = "entityRemembered";
    /** Precondition: the entity is remembered in that shard. */
    public static final String ENTITY_FORGOTTEN = "entityForgotten";
    /**
     * The region's offer (capacity, tags, shard cap) is now {@code offer}. Precondition: {@code region}
     * is registered.
     */
    public static final String SHARD_REGION_OFFER_CHANGED = "shardRegionOfferChanged";
    /** The region is (no longer) draining. Precondition: {@code region} is registered. */
    public static final String SHARD_REGION_DRAINING_CHANGED = "shardRegionDrainingChanged";
    /**
     * These shards' smoothed loads are now as given (see {@code coordinator::loads}). Precondition:
     * every load is finite and &gt;= 0.
     */
    public static final String SHARD_LOADS_SMOOTHED = "shardLoadsSmoothed";
  }

  /** The {@code type} values of {@code CoordinatorInput}. */
  public static final class CoordinatorInput {
    private CoordinatorInput() {}

    /** A message from a region or proxy. */
    public static final String RECEIVE = "receive";
    /** A cluster member joined or changed (status, version, data center). */
    public static final String MEMBER = "member";
    /** A member left the cluster. */
    public static final String MEMBER_REMOVED = "memberRemoved";
    public static final String REACHABILITY = "reachability";
    /** A region or proxy stopped or crashed while its node stays in the cluster. */
    public static final String REGION_TERMINATED = "regionTerminated";
    public static final String LEASE_GRANTED = "leaseGranted";
    public static final String LEASE_DENIED = "leaseDenied";
    public static final String LEASE_RENEWED = "leaseRenewed";
    public static final String LEASE_RENEW_FAILED = "leaseRenewFailed";
    public static final String LEASE_LOST = "leaseLost";
    public static final String STATE_LOADED = "stateLoaded";
    /** {@code fenced}: the store has seen a larger token. */
    public static final String STATE_LOAD_FAILED = "stateLoadFailed";
    public static final String STORE_FAILED = "storeFailed";
    /** Full-cluster shutdown is coming: no more rebalancing. */
    public static final String PREPARING_FOR_SHUTDOWN = "preparingForShutdown";
    /** Stop coordinating and release the lease. */
    public static final String STOP = "stop";
    /**
     * A planned shutdown of the region is coming: least-load moves its shards away within
     * its movement budget and places none there.
     */
    public static final String DRAIN = "drain";
    /** Ends a drain: the region takes shards again. */
    public static final String UNDRAIN = "undrain";
  }

  /** The {@code type} values of {@code CoordinatorNotice}. */
  public static final class CoordinatorNotice {
    private CoordinatorNotice() {}

    public static final String ACTIVE = "active";
    public static final String STEPPED_DOWN = "steppedDown";
    public static final String REGISTER_REFUSED = "registerRefused";
    public static final String HAND_OFF_STARTED = "handOffStarted";
    public static final String HAND_OFF_COMPLETED = "handOffCompleted";
    public static final String HAND_OFF_TIMED_OUT = "handOffTimedOut";
    public static final String ALLOCATION_FAILED = "allocationFailed";
    /** A shard got a home: its first, or a new one after a hand-off. With {@code decisionEvents}. */
    public static final String ALLOCATED = "allocated";
    /**
     * One rebalance round: the shards it hands off (none when it skipped) and why. With
     * {@code decisionEvents}.
     */
    public static final String REBALANCE_ROUND = "rebalanceRound";
    /**
     * A region's command was malformed and ignored as a whole ({@code reportLoads},
     * {@code updateOffer}).
     */
    public static final String COMMAND_REFUSED = "commandRefused";
  }

  /** The {@code type} values of {@code CoordinatorOutput}. */
  public static final class CoordinatorOutput {
    private CoordinatorOutput() {}

    public static final String SEND = "send";
    /** Write-ahead: durable before any later output. */
    public static final String PERSIST = "persist";
    public static final String SAVE_SNAPSHOT = "saveSnapshot";
    public static final String LEASE = "lease";
    /**
     * Load the stored state with this token (fencing older writers), then feed
     * {@code CoordinatorInput::StateLoaded} or {@code CoordinatorInput::StateLoadFailed}.
     */
    public static final String LOAD_STATE = "loadState";
    public static final String NOTICE = "notice";
  }

  /** The values of {@code CoordinatorPhase}. */
  public static final class CoordinatorPhase {
    private CoordinatorPhase() {}

    /** Created, {@code Coordinator::start} not called yet. */
    public static final String IDLE = "idle";
    /** Waiting for the lease (requested, or retrying after a refusal). */
    public static final String ACQUIRING_LEASE = "acquiringLease";
    /** Holding the lease, waiting for the stored state. */
    public static final String LOADING = "loading";
    /** Holding the lease with the state loaded: allocating and rebalancing. */
    public static final String ACTIVE = "active";
    /** After the stop input: the lease is released and nothing more is done. */
    public static final String STOPPED = "stopped";
  }

  /** The {@code type} values of {@code Directive}. */
  public static final class Directive {
    private Directive() {}

    public static final String REGISTER_ACK = "registerAck";
    public static final String SHARD_HOME = "shardHome";
    public static final String SHARD_HOMES = "shardHomes";
    /** Start hosting {@code shard}, with the remembered {@code entities} (empty unless remember-entities). */
    public static final String HOST_SHARD = "hostShard";
    public static final String BEGIN_HAND_OFF = "beginHandOff";
    public static final String HAND_OFF = "handOff";
  }

  /** The values of {@code HandOffTimeoutPolicy}. */
  public static final class HandOffTimeoutPolicy {
    private HandOffTimeoutPolicy() {}

    /** Pekko: the shard stays with its owner, which is told to host it again. */
    public static final String KEEP_OWNER = "keep-owner";
    /**
     * actor-ts: the shard is deallocated and re-allocated at once. The new home is announced
     * to every region with a newer stamp, so the old owner stops its copy as soon as it hears
     * of it and can never start it again from an older directive. Only an owner that has
     * acknowledged {@code BeginHandOff} (and so no longer delivers) is overruled this way; one that
     * never answered may still be running the shard and keeps it, as under {@code KeepOwner}.
     */
    public static final String FORCE_REALLOCATE = "force-reallocate";
  }

  /** The {@code type} values of {@code LeaseRequest}. */
  public static final class LeaseRequest {
    private LeaseRequest() {}

    public static final String ACQUIRE = "acquire";
    public static final String RENEW = "renew";
    public static final String RELEASE = "release";
  }

  /** The values of {@code MemberStatus}. */
  public static final class MemberStatus {
    private MemberStatus() {}

    public static final String JOINING = "Joining";
    public static final String WEAKLY_UP = "WeaklyUp";
    public static final String UP = "Up";
    public static final String LEAVING = "Leaving";
    public static final String EXITING = "Exiting";
    public static final String DOWN = "Down";
  }

  /** The values of {@code MetricKind}. */
  public static final class MetricKind {
    private MetricKind() {}

    /** A value now (may go down). */
    public static final String GAUGE = "gauge";
    /** A monotonic total since the state machine was created. */
    public static final String COUNTER = "counter";
  }

  /** The {@code type} values of {@code Operation}. */
  public static final class Operation {
    private Operation() {}

    /** Complete with {@code sent} (or {@code failed}; delivery may be lossy anyway). */
    public static final String SEND = "send";
    /** Append to the store under {@code token}: {@code written}, {@code fenced} or {@code failed}. */
    public static final String APPEND = "append";
    /** Replace the stored snapshot under {@code token}: {@code written}, {@code fenced} or {@code failed}. */
    public static final String SAVE_SNAPSHOT = "saveSnapshot";
    /** Load the stored state, fencing writers below {@code token}: {@code loaded}, {@code fenced} or {@code failed}. */
    public static final String LOAD = "load";
    /** {@code granted}, {@code denied} or {@code failed}. */
    public static final String ACQUIRE = "acquire";
    /** {@code renewed}, {@code lost} or {@code failed}. */
    public static final String RENEW = "renew";
    /** {@code released} or {@code failed}. */
    public static final String RELEASE = "release";
  }

  /** The {@code type} values of {@code RegionInput}. */
  public static final class RegionInput {
    private RegionInput() {}

    public static final String RECEIVE = "receive";
    /** The coordinator moved (or may have): register again. */
    public static final String COORDINATOR_CHANGED = "coordinatorChanged";
    /** Another region died: forget the homes it had. */
    public static final String REGION_TERMINATED = "regionTerminated";
    /** The host finished stopping a shard's entities. */
    public static final String SHARD_STOPPED = "shardStopped";
    /** An entity was passivated on purpose. */
    public static final String ENTITY_PASSIVATED = "entityPassivated";
    /** Hand every shard off, then stop. */
    public static final String GRACEFUL_SHUTDOWN = "gracefulShutdown";
    /**
     * The host measured its shards' loads: each a number, or a number per dimension (all
     * the same way), finite and &gt;= 0.
     */
    public static final String REPORT_LOADS = "reportLoads";
    /** The region's capacity, tags or shard cap changed; replaces the whole offer. */
    public static final String UPDATE_OFFER = "updateOffer";
  }

  /** The {@code type} values of {@code RegionNotice}. */
  public static final class RegionNotice {
    private RegionNotice() {}

    public static final String REGISTERED = "registered";
    /** A directive older than what the region has seen was ignored. */
    public static final String DIRECTIVE_REFUSED = "directiveRefused";
    /** An input was malformed and ignored ({@code reportLoads}, {@code updateOffer}). */
    public static final String INPUT_REFUSED = "inputRefused";
  }

  /** The {@code type} values of {@code RegionOutput}. */
  public static final class RegionOutput {
    private RegionOutput() {}

    public static final String SEND = "send";
    /** Start hosting a shard, with the entities to start right away (remember-entities). */
    public static final String START_SHARD = "startShard";
    /** More remembered entities for a shard already running. */
    public static final String START_ENTITIES = "startEntities";
    public static final String DELIVER = "deliver";
    /** Stop every entity of the shard, then report {@code RegionInput::ShardStopped}. */
    public static final String STOP_SHARD = "stopShard";
    /** A message forwarded here by another region that could not be kept. */
    public static final String UNDELIVERABLE = "undeliverable";
    /** Graceful shutdown finished: nothing hosted, nothing buffered. */
    public static final String STOPPED = "stopped";
    public static final String NOTICE = "notice";
  }

  /** The {@code reason} values of {@code Skip}. */
  public static final class Skip {
    private Skip() {}

    /** The new least-shard strategy waits for the previous round to finish. */
    public static final String SHARDS_IN_PROGRESS = "shardsInProgress";
    /** Legacy: as many hand-offs as allowed are running. */
    public static final String TOO_MANY_IN_PROGRESS = "tooManyInProgress";
    /** Members run different app versions (a rolling upgrade). */
    public static final String MIXED_VERSIONS = "mixedVersions";
    /** Members of the coordinator's data center are unreachable. */
    public static final String UNREACHABLE_MEMBERS = "unreachableMembers";
    /** Members of the coordinator's data center are joining. */
    public static final String JOINING_MEMBERS = "joiningMembers";
    public static final String NO_REGIONS = "noRegions";
    public static final String NO_SHARDS = "noShards";
    /** Every region is within the strategy's tolerance. */
    public static final String BALANCED = "balanced";
    /** The spread between most and least loaded is not above the threshold. */
    public static final String BELOW_THRESHOLD = "belowThreshold";
    /** The external location source did not answer. */
    public static final String LOOKUP_UNAVAILABLE = "lookupUnavailable";
    /** Fewer than two candidates. */
    public static final String NOT_ENOUGH_CANDIDATES = "notEnoughCandidates";
    /**
     * least-load: above the band, but no single move off the busiest region lowers the
     * larger of the two utilisations.
     */
    public static final String STABLE = "stable";
  }

  /** The {@code outcome} values of {@code WriteOutcome}. */
  public static final class WriteOutcome {
    private WriteOutcome() {}

    public static final String WRITTEN = "written";
    /** A writer with a larger token exists; this writer must stop. */
    public static final String FENCED = "fenced";
  }

  /** The notice types the core marks as warnings: something refused, failed or lost. */
  public static final java.util.Set<String> WARNING_NOTICES =
      java.util.Set.of(
          "allocationFailed",
          "commandRefused",
          "directiveRefused",
          "handOffTimedOut",
          "inputRefused",
          "registerRefused",
          "steppedDown");
}
