'use strict'
// What the server confirmed: the observed inventory counts every slot the player owns, and an
// item that belongs to an earlier action (a late drop) is never credited to the current one.
const test = require('node:test')
const assert = require('node:assert')
const { Vec3 } = require('vec3')
const { World } = require('../src/world')
const { Ledger } = require('../src/ledger')
const { FakeBot } = require('./fake_bot')

const CONFIG = { body: {}, limits: {}, harvest: null }

function item (name, count) { return { name, count, type: name.length, enchants: [] } }

function dropEntity (id, name, count) {
  return { id, name: 'item', metadata: [null, null, null, null, null, null, null, null, { present: true, itemId: 7, itemCount: count }] }
}

function botWithItems () {
  const bot = new FakeBot()
  bot.registry.items[7] = { id: 7, name: 'dirt' }
  return bot
}

test('the inventory counts the crafting grid and the cursor, never the result preview', () => {
  const bot = botWithItems()
  bot.inventory.slots[0] = item('oak_planks', 4) // the result slot: a preview only
  bot.inventory.slots[2] = item('oak_log', 1) // left in the 2x2 grid
  bot.inventory.slots[20] = item('oak_log', 3)
  bot.inventory.selectedItem = item('oak_log', 1) // on the cursor
  const w = new World(bot, CONFIG, {})
  assert.deepStrictEqual(w.rawTotals(), { oak_log: 5 })
  bot.end()
})

test('a drop from a dig the server never confirmed is not credited when it arrives later', () => {
  const bot = botWithItems()
  const ledger = new Ledger(bot)
  const w = new World(bot, CONFIG, { ledger })
  ledger.beginAction() // action 1: the dig at (2, 4, 3) gets no answer in time
  ledger.addPending(new Vec3(2, 4, 3))
  ledger.beginAction() // action 2: the server finally breaks it; its drop spawns and is picked up
  bot._client.emit('spawn_entity', { entityId: 9, type: 44, x: 2.5, y: 4.5, z: 3.5 })
  bot.inventory.slots[36] = item('dirt', 1)
  bot.emit('playerCollect', bot.entity, dropEntity(9, 'dirt', 1))
  assert.deepStrictEqual(w.rawTotals(), { dirt: 1 }) // the inventory is what it is
  assert.deepStrictEqual(w.totals(), {}) // but this action produced nothing
  bot.end()
})

test('a drop left from an earlier action is not credited; a fresh one and collect\'s target are', () => {
  const bot = botWithItems()
  const ledger = new Ledger(bot)
  const w = new World(bot, CONFIG, { ledger })
  ledger.beginAction()
  bot._client.emit('spawn_entity', { entityId: 5, type: 44, x: 0, y: 5, z: 0 })
  ledger.beginAction() // the drop of action 1 is picked up during action 2
  bot.inventory.slots[36] = item('dirt', 1)
  bot.emit('playerCollect', bot.entity, dropEntity(5, 'dirt', 1))
  assert.deepStrictEqual(w.totals(), {})
  bot._client.emit('spawn_entity', { entityId: 6, type: 44, x: 9, y: 5, z: 9 }) // spawned in action 2
  bot.inventory.slots[36] = item('dirt', 2)
  bot.emit('playerCollect', bot.entity, dropEntity(6, 'dirt', 1))
  assert.deepStrictEqual(w.totals(), { dirt: 1 })
  ledger.beginAction() // action 3 is a collect of an old drop: that one counts
  bot._client.emit('spawn_entity', { entityId: 8, type: 44, x: 1, y: 5, z: 1 })
  ledger.beginAction()
  ledger.allow(8)
  bot.inventory.slots[36] = item('dirt', 3)
  bot.emit('playerCollect', bot.entity, dropEntity(8, 'dirt', 1))
  assert.deepStrictEqual(w.totals(), { dirt: 3 })
  bot.end()
})

test('block updates are recorded only from the server, at the watched position', () => {
  const bot = botWithItems()
  const ledger = new Ledger(bot)
  const watch = ledger.watchBlock(new Vec3(1, 4, 1))
  bot._client.emit('block_change', { location: { x: 1, y: 4, z: 2 }, type: 0 })
  assert.strictEqual(watch.state, undefined)
  bot._client.emit('multi_block_change', { chunkCoordinates: { x: 0, y: 0, z: 0 }, records: [(9 * 4096) + (1 << 8) + (1 << 4) + 4] })
  assert.strictEqual(watch.state, 9)
  bot._client.emit('block_change', { location: { x: 1, y: 4, z: 1 }, type: 0 })
  assert.strictEqual(watch.state, 0)
  watch.stop()
  bot.end()
})
