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

/** A seeded generator (mulberry32) with the draws the randomized tests make. */
export function seeded(seed) {
  let a = seed >>> 0
  const rnd = () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (n) => Math.floor(rnd() * n)
  const pick = (xs) => xs[int(xs.length)]
  const shuffle = (xs) => {
    for (let i = xs.length - 1; i > 0; i--) {
      const j = int(i + 1)
      ;[xs[i], xs[j]] = [xs[j], xs[i]]
    }
    return xs
  }
  return { rnd, int, pick, shuffle }
}
