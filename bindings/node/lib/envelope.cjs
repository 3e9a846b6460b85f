'use strict'
// Envelopes cross into the native module as flat fields: the C ABI's typed envelope,
// `shardline_bind::flat_envelope` in Rust. Each Node-API property read or write costs about as
// much as a function call, while JavaScript reads and builds these objects at full speed, so
// the coordinator and region steps read an envelope here and build the `send` outputs here.
// The fields, in order: kind, from, to, shard, entity, region, node, token, version, extra
// (a forward's payload, a hostShard's entities, a shardHomes' homes); text a kind does not use
// and the coordinator as an endpoint are '' going in and undefined coming out.
//
// An envelope this file does not recognise as well formed goes to the native module as an
// object instead, which reads it as JSON data and names what is wrong: one set of rules.

const native = require('../index.js')

// The order of shardline_bind::flat_envelope::KINDS (kinds 0-9 are commands, 10-15
// directives, 16 the forward).
const KINDS = [
  'register', 'registerProxy', 'getShardHome', 'shardStarted', 'beginHandOffAck', 'shardStopped',
  'gracefulShutdownReq', 'regionStopped', 'entityStarted', 'entityPassivated',
  'registerAck', 'shardHome', 'shardHomes', 'hostShard', 'beginHandOff', 'handOff',
  'forward',
]
const KIND = new Map(KINDS.map((k, i) => [k, i]))

const isText = (x) => typeof x === 'string'
const isUint = (x) => Number.isSafeInteger(x) && x >= 0
const isObject = (x) => x !== null && typeof x === 'object'

const endpoint = (id) => (id === undefined ? 'coordinator' : { region: id })

function body (kind, shard, entity, region, node, token, version, extra) {
  const type = KINDS[kind]
  switch (kind) {
    case 0: case 1: return { type, node }
    case 2: return { type, shard }
    case 6: case 7: return { type }
    case 8: case 9: return { type, shard, entity }
    case 10: return { type, token }
    case 11: return { type, shard, region, stamp: { token, version } }
    case 12: return { type, token, homes: extra }
    case 13:
      return extra.length === 0
        ? { type, shard, stamp: { token, version } }
        : { type, shard, stamp: { token, version }, entities: extra }
    case 16: return { shard, entity, payload: extra }
    default: return { type, shard, stamp: { token, version } }
  }
}

/** A `send` output from flat fields, pushed onto `into` if given (called by the native module). */
function send (into, kind, from, to, shard, entity, region, node, token, version, extra) {
  const b = body(kind, shard, entity, region, node, token, version, extra)
  const message = kind < 10 ? { command: b } : kind < 16 ? { directive: b } : { forward: b }
  const output = { type: 'send', envelope: { from: endpoint(from), to: endpoint(to), message } }
  if (into !== undefined) into.push(output)
  return output
}
native._setSendBuilder(send)

// A region id as an endpoint, '' for the coordinator; undefined when it is neither.
function endpointId (x) {
  if (x === 'coordinator') return ''
  return isObject(x) && isText(x.region) && x.region !== '' && Object.keys(x).length === 1 ? x.region : undefined
}

function stamped (b) {
  return isText(b.shard) && isObject(b.stamp) && isUint(b.stamp.token) && isUint(b.stamp.version)
}

/** The flat fields of a well-formed envelope, or null. */
function flat (e) {
  if (!isObject(e)) return null
  const from = endpointId(e.from)
  const to = endpointId(e.to)
  const m = e.message
  if (from === undefined || to === undefined || !isObject(m) || Object.keys(m).length !== 1) return null
  const b = m.command ?? m.directive ?? m.forward
  if (!isObject(b)) return null
  let kind
  if (m.command !== undefined) {
    kind = KIND.get(b.type)
    if (!(kind < 10)) return null
  } else if (m.directive !== undefined) {
    kind = KIND.get(b.type)
    if (!(kind >= 10 && kind < 16)) return null
  } else {
    kind = 16
  }
  // Text is passed as '' when a kind does not use it: the addon reads a string in one call.
  let shard = ''
  let entity = ''
  let region = ''
  let node = ''
  let extra
  let token = 0
  let version = 0
  switch (kind) {
    case 0: case 1:
      // A registration with an offer (capacity, tags, maxShards) goes as an object.
      if (!isText(b.node) || Object.keys(b).length !== 2) return null
      node = b.node
      break
    case 2:
      if (!isText(b.shard)) return null
      shard = b.shard
      break
    case 6: case 7:
      break
    case 8: case 9: case 16:
      if (!isText(b.shard) || !isText(b.entity)) return null
      if (kind === 16 && !(b.payload instanceof Uint8Array)) return null
      shard = b.shard
      entity = b.entity
      extra = b.payload
      break
    case 10: case 12:
      if (!isUint(b.token) || (kind === 12 && !Array.isArray(b.homes))) return null
      token = b.token
      extra = b.homes
      break
    default: // stamped: 3, 4, 5, 11, 13, 14, 15
      if (!stamped(b) || (kind === 11 && !isText(b.region))) return null
      if (kind === 13 && b.entities !== undefined && !(Array.isArray(b.entities) && b.entities.every(isText))) return null
      shard = b.shard
      if (kind === 11) region = b.region
      if (kind === 13) extra = b.entities
      token = b.stamp.token
      version = b.stamp.version
  }
  return [kind, from, to, shard, entity, region, node, token, version, extra]
}

const isReceive = (input) => isObject(input) && input.type === 'receive' && Object.keys(input).length === 2

// The step machines' `handle` and the drivers' `receive` take the flat path when they can.
for (const Step of [native.Coordinator, native.Region]) {
  const generic = Step.prototype.handle
  Step.prototype.handle = function handle (nowMs, input) {
    const a = isReceive(input) ? flat(input.envelope) : null
    if (a === null) return generic.call(this, nowMs, input)
    return native._receive(this, nowMs, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9])
  }
}
for (const Step of [native.Coordinator, native.Region]) {
  /** Every queued output, in the order they must be carried out. */
  Step.prototype.drainOutputs = function drainOutputs () {
    const out = []
    native._drain(this, out)
    return out
  }
}
for (const Driver of [native.CoordinatorDriver, native.RegionDriver]) {
  /** A message from another region or the coordinator. */
  Driver.prototype.receive = function receive (envelope) {
    const a = flat(envelope)
    if (a === null) return this.handle({ type: 'receive', envelope })
    return native._receive(this, 0, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9])
  }
}

module.exports = { KINDS }
