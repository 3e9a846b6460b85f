// Shared by the tests: where the repository's vectors are, and the comparison
// core/tests/vectors.rs `check` makes.
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { dirname, join } from 'node:path'
import { isDeepStrictEqual } from 'node:util'

export const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..')

export function vectors(file) {
  return JSON.parse(readFileSync(join(repo, 'tests', 'vectors', file), 'utf8'))
}

/** A description of how `got` differs from the vector's expectation, or null. */
export function check(v, got) {
  const expect = v.expect
  const id = v.id ?? '?'
  for (const key of ['region', 'error', 'pending', 'order', 'shards', 'shardsInOrder', 'rounds']) {
    if (key in expect && !isDeepStrictEqual(got[key], expect[key])) {
      return `${id}: ${key}: expected ${JSON.stringify(expect[key])}, got ${JSON.stringify(got[key] ?? null)}`
    }
  }
  if (v.then) {
    let counts = [...(got.then?.counts ?? [])]
    let expected = [...v.then.expectCounts]
    if (v.then.countsSorted === true) {
      counts.sort((a, b) => a - b)
      expected.sort((a, b) => a - b)
    }
    if (!isDeepStrictEqual(counts, expected)) {
      return `${id}: counts after re-allocation: expected ${JSON.stringify(expected)}, got ${JSON.stringify(counts)}`
    }
    if (v.then.expectRegions && !isDeepStrictEqual(got.then.regions, v.then.expectRegions)) {
      return `${id}: regions after re-allocation: expected ${JSON.stringify(v.then.expectRegions)}, got ${JSON.stringify(got.then.regions)}`
    }
  }
  return null
}

/** Runs `fn` and returns what it threw (failing if it did not throw). */
export function thrown(fn) {
  try {
    fn()
  } catch (e) {
    return e
  }
  throw new Error('expected the call to throw')
}
