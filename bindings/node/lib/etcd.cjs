'use strict'
// etcd's operations (shardline_bind::ops::etcd) by their JavaScript names. A lease's and a
// store's answer Promises (the request runs on the libuv thread pool), so they serve the
// event-loop AsyncCoordinatorDriver as they are; a synchronous driver takes their backend.

const native = require('../index.js')
const { define } = require('./ops.cjs')

define(native.Etcd, { getters: { namespace: 'namespace' } })

define(native.EtcdLease, {
  methods: { holder: 'holder', acquire: 'acquire', renew: 'renew', release: 'release' },
})

define(native.EtcdStore, {
  methods: { append: 'append', saveSnapshot: 'save_snapshot', load: 'load' },
})
