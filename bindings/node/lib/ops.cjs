'use strict'
// Operations by name (src/ops.rs): a native class answers its queries through one
// `op(name, args)` method, and `define` gives each operation its public name on the native
// prototype, so `instanceof` and the generated constructors stay as they are. Declare what
// you define in lib/index.d.ts (`declare module '../index' { interface Kind { ... } }`).

/**
 * `getters`: `{jsName: 'op_name'}`, read-only properties; `methods`: `{jsName: 'op_name'}`,
 * passing their arguments on, or `{jsName: function}` where an argument needs reshaping.
 */
function define (cls, { getters = {}, methods = {} }) {
  for (const [name, op] of Object.entries(getters)) {
    Object.defineProperty(cls.prototype, name, {
      get () { return this.op(op, []) },
      configurable: true,
    })
  }
  for (const [name, op] of Object.entries(methods)) {
    const value = typeof op === 'function' ? op : function (...args) { return this.op(op, args) }
    Object.defineProperty(cls.prototype, name, { value, writable: true, configurable: true })
  }
}

// actor-ts numbers its shards; a shard id is their decimal text.
const shardId = (s) => (Number.isSafeInteger(s) && s >= 0 ? String(s) : s)

module.exports = { define, shardId }
