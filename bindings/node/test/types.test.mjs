// The typings compile against a program that uses the whole API (and reject misuse).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { dirname, join } from 'node:path'

const here = dirname(fileURLToPath(import.meta.url))

test('index.d.ts and lib/index.d.ts type-check a program using the API', () => {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')
  const r = spawnSync(process.execPath, [tsc, '-p', join(here, 'tsconfig.json')], { encoding: 'utf8', timeout: 300_000 })
  assert.equal(r.signal, null)
  assert.equal(r.status, 0, r.stdout + r.stderr)
})
