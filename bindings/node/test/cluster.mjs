// A small in-process cluster for the tests: one coordinator driver, region drivers, and a
// wire that delivers envelopes when pumped (never from inside a callback).
import { CoordinatorDriver, RegionDriver, ManualClock } from 'shardline'

export function node(i) {
  return `pekko://sys@h${i}:2552`
}

export class Cluster {
  constructor({ strategy = { kind: 'least-shard' }, config = {}, coordinator = {} } = {}) {
    this.wire = []
    this.clock = new ManualClock(1_000)
    this.regions = new Map()
    this.log = []
    this.coordinator = new CoordinatorDriver({
      strategy,
      selfAddress: node(0),
      config,
      transport: (e) => this.wire.push(e),
      clock: this.clock,
      ...coordinator,
    })
  }

  addRegion(id, i, host = this.host(id), extractor = (e) => e.split('-')[0]) {
    this.coordinator.member({ address: node(i) })
    const r = new RegionDriver({
      id,
      node: node(i),
      extractor,
      transport: { send: (e) => this.wire.push(e) },
      clock: this.clock,
      host,
    })
    this.regions.set(id, r)
    return r
  }

  host(id) {
    return {
      startShard: (shard) => this.log.push(`${id} start ${shard}`),
      deliver: (shard, entity, payload) => this.log.push(`${id} ${entity}=${payload.toString()}`),
      stopShard: (shard) => {
        this.log.push(`${id} stop ${shard}`)
        return true
      },
    }
  }

  pump() {
    for (let steps = 0; this.wire.length; steps++) {
      if (steps > 100_000) throw new Error('the wire does not settle')
      const e = this.wire.shift()
      if (e.to === 'coordinator') this.coordinator.receive(e)
      else this.regions.get(e.to.region)?.receive(e)
    }
  }
}
