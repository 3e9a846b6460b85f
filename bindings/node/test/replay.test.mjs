// Every recorded state-machine trace in tests/traces replayed through replay() (as every
// binding does): no mismatch, a changed output caught, a broken trace named by line.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'

import { replay } from 'shardline'
import { repo } from './helpers.mjs'

const dir = join(repo, 'tests', 'traces')
const traces = readdirSync(dir)
  .filter((f) => f.endsWith('.jsonl'))
  .sort()
  .map((f) => ({ name: f, text: readFileSync(join(dir, f), 'utf8') }))

test('there are traces', () => {
  assert.ok(traces.length >= 4, `only ${traces.length} traces`)
})

for (const { name, text } of traces) {
  test(`trace ${name} replays identically`, () => {
    const r = replay(text)
    assert.equal(r.mismatches, 0, JSON.stringify(r.first))
    assert.equal(r.first, null)
    assert.ok(r.steps > 100)
  })
}

test('a changed output is the first mismatch', () => {
  const lines = traces[0].text.split('\n').filter((l) => l.length > 0)
  let step = 0
  let line = 0
  for (let i = 0; i < lines.length; i++) {
    const record = JSON.parse(lines[i])
    if (!('input' in record)) continue
    step++
    if (record.outputs.length > 0) {
      record.outputs[0] = { type: 'stopped' }
      lines[i] = JSON.stringify(record)
      line = i + 1
      break
    }
  }
  const r = replay(lines.join('\n'))
  assert.equal(r.mismatches, 1)
  assert.equal(r.first.step, step)
  assert.equal(r.first.line, line)
  assert.deepEqual(r.first.expected.outputs[0], { type: 'stopped' })
  assert.notDeepEqual(r.first.actual.outputs[0], { type: 'stopped' })
})

test('a broken trace names the line and field', () => {
  const header = traces[0].text.split('\n')[0]
  assert.throws(() => replay('not json'), { code: 'INVALID_ARGUMENT', message: /line 1: not valid JSON/ })
  assert.throws(() => replay(`${header}\n{"end":"c9"}`), {
    code: 'INVALID_ARGUMENT',
    message: /line 2: field end: unknown machine "c9"/,
  })
  assert.throws(() => replay(header.replace('"version":1', '"version":2')), {
    code: 'INVALID_ARGUMENT',
    message: /line 1: field version/,
  })
  assert.throws(() => replay(42), { code: 'INVALID_ARGUMENT' })
})
