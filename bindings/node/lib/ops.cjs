'use strict'
// Operations by name (src/ops.rs): the native `_op(target, name, args)` answers every class's
// operations, `define` puts `op(name, args)` over it on a native class's prototype (unless the
// class has its own, as AsyncCoordinatorDriver does) and gives each operation its public name
// there, so `instanceof` and the generated constructors stay as they are. Declare what you define in lib/index.d.ts
// (`declare module '../index' { interface Kind { ... } }`).

const native = require('../index.js')

/**
 * `getters`: `{jsName: 'op_name'}`, read-only properties; `methods`: `{jsName: 'op_name'}`,
 * passing their arguments on, or `{jsName: function}` where an argument needs reshaping.
 */
function define (cls, { getters = {}, methods = {} }) {
  if (!Object.hasOwn(cls.prototype, 'op')) {
    Object.defineProperty(cls.prototype, 'op', {
      value (name, args) { return native._op(this, name, args) },
      writable: true,
      configurable: true,
    })
  }
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
