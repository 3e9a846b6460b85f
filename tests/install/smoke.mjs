// Run by scripts/test-install.sh in a fresh npm project holding only the tarballs from dist/.
//
//   node smoke.mjs VECTORS.json ETCD_ENDPOINT
//
// Prints the lines the harness checks: DECIDE (decisions of the vectors, JSON), PHASES (a
// coordinator's phase after start and after its lease is granted) and ETCD (an event-loop
// coordinator that took its lease and restored its state from a real etcd). Loads the package
// both ways a user does, ESM and CommonJS.
import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { AsyncCoordinatorDriver, Coordinator, decideJson, Etcd } from 'shardline'

const cjs = createRequire(import.meta.url)('shardline')
if (cjs.decideJson !== decideJson) throw new Error('the CommonJS and ESM entries load different modules')

const decisions = decideJson(readFileSync(process.argv[2], 'utf8'))
console.log('DECIDE', JSON.stringify(JSON.parse(decisions)))

const coordinator = new Coordinator({ strategy: { kind: 'least-shard' }, selfAddress: 'pekko://app@10.0.0.1:2552' })
coordinator.start(0)
const started = coordinator.phase
coordinator.handle(0, { type: 'leaseGranted', token: 1, validUntilMs: 60_000 })
console.log('PHASES', started, coordinator.phase)
coordinator.close()

const etcd = new Etcd([process.argv[3]], `shardline-install-test/${randomUUID()}`)
const driver = new AsyncCoordinatorDriver({
  strategy: { kind: 'least-shard' }, selfAddress: 'pekko://app@10.0.0.1:2552', transport: () => {},
  lease: etcd.lease('coordinator', 'install-test', { ttlMs: 10_000 }),
  store: etcd.store('state', { boundToLease: 'coordinator' }),
})
driver.start()
await driver.settled()
for (const e of driver.takeErrors()) console.error(e)
console.log('ETCD', driver.token, driver.isActive ? 'active' : driver.phase)
driver.stop()
await driver.settled()
