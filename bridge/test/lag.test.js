'use strict'
// place and ascend against a server that does not answer a placement in time: the bridge's own
// timeout must reach Python as an error (an infrastructure fault, rerun), never as the agent's
// failed action; a placement the game refuses stays the agent's `no_spot`.
const test = require('node:test')
const assert = require('node:assert')
const { Vec3 } = require('../src/world')
const { place } = require('../src/skills/items')
const { ascend } = require('../src/skills/gather')

function world ({ placeBlock }) {
  const feet = new Vec3(0, 64, 0)
  const counts = { dirt: 4 }
  const blockAt = (pos) => pos.y < 64
    ? { name: 'stone', boundingBox: 'block', position: pos }
    : { name: 'air', boundingBox: 'empty', position: pos }
  const bot = {
    entity: { position: new Vec3(0.5, 64, 0.5), yaw: 0 },
    blockAt,
    equip: async () => {},
    look: async () => {},
    setControlState: () => {},
    placeBlock
  }
  return {
    bot,
    body: { disposable_blocks: ['dirt'] },
    config: { limits: { click_timeout_ms: 30 } },
    feet: () => feet,
    isItem: () => true,
    isBlock: () => true,
    findItem: (name) => ({ name, count: counts[name] }),
    count: (name) => counts[name] || 0,
    totals: () => ({ ...counts }),
    canClear: () => true,
    checkCancelled: () => {},
    until: async () => { bot.entity.position = new Vec3(0.5, 65.2, 0.5); return true },
    ticks: async () => 6
  }
}

const never = () => new Promise(() => {})
const refused = async () => { throw new Error('No block has been placed : the block is still air') }

test('a placement the server never answers is a timeout error, not no_spot', async () => {
  await assert.rejects(place(world({ placeBlock: never }), { block: 'dirt' }), (err) => err.code === 'timeout')
})

test('a placement the game refuses is the agent\'s no_spot', async () => {
  const out = await place(world({ placeBlock: refused }), { block: 'dirt' })
  assert.strictEqual(out.ok, false)
  assert.strictEqual(out.reason, 'no_spot')
})

test('pillaring on a server that never answers is a timeout error, not no_spot', async () => {
  await assert.rejects(ascend(world({ placeBlock: never }), { height: 1 }), (err) => err.code === 'timeout')
})

test('pillaring the game refuses is the agent\'s no_spot', async () => {
  const out = await ascend(world({ placeBlock: refused }), { height: 1 })
  assert.strictEqual(out.ok, false)
  assert.strictEqual(out.reason, 'no_spot')
})
