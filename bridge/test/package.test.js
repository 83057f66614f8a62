'use strict'
// The lock file pins only packages that run on Node 20, so `npm ci --engine-strict` passes there.
const test = require('node:test')
const assert = require('node:assert')
const path = require('node:path')
const semver = require('semver')

const lock = require(path.join(__dirname, '..', 'package-lock.json'))
const pkg = require(path.join(__dirname, '..', 'package.json'))

test('every locked package accepts Node 20 in its engines field', () => {
  const refused = []
  for (const [where, info] of Object.entries(lock.packages)) {
    const wanted = info.engines && info.engines.node
    if (!wanted) continue
    if (!semver.satisfies('20.0.0', wanted) || !semver.satisfies('20.19.0', wanted)) refused.push(`${where || 'the bridge'}@${info.version}: node ${wanted}`)
  }
  assert.deepStrictEqual(refused, [])
})

test('minecraft-protocol is held at a release that supports Node 20', () => {
  assert.strictEqual(pkg.overrides['minecraft-protocol'], lock.packages['node_modules/minecraft-protocol'].version)
  assert.strictEqual(lock.packages['node_modules/mineflayer'].version, '4.25.0')
})
