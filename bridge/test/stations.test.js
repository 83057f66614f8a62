'use strict'
// smelt and enchant against scripted furnace and enchanting-table windows: what the server
// produces is what the skill reports, with the embedded body's reasons and result fields.
const test = require('node:test')
const assert = require('node:assert')
const { smelt, enchant } = require('../src/skills/stations')
const { FakeWorld } = require('./fake_world')

const nuggets = (input) => (input === 'raw_iron' ? { name: 'iron_nugget', count: 3 } : null) // a changed rule

test('smelting reports what the furnace actually produced, and the fuel it burned', async () => {
  const w = new FakeWorld({ inventory: { raw_iron: 2, coal: 1 }, stations: { furnace: true }, cook: nuggets })
  const r = await smelt(w, { input: 'raw_iron', station: 'furnace', count: 2 })
  assert.strictEqual(r.ok, true, r.message)
  assert.deepStrictEqual(r.produced, { iron_nugget: 6 })
  assert.deepStrictEqual(r.consumed, { coal: 1, raw_iron: 2 })
  assert.deepStrictEqual(r.details, { processed: 2, fuel: { coal: 1 } })
  assert.ok(w.furnace.closed)
})

test('an input the server cannot cook is returned: no_result', async () => {
  const w = new FakeWorld({ inventory: { dirt: 1, coal: 2 }, stations: { furnace: true }, cook: nuggets })
  const r = await smelt(w, { input: 'dirt', station: 'furnace', count: 1 })
  assert.strictEqual(r.reason, 'no_result')
  assert.deepStrictEqual(w.totals(), { coal: 2, dirt: 1 })
})

test('fuel running out stops after what it could cook', async () => {
  const w = new FakeWorld({ inventory: { raw_iron: 3, stick: 2 }, stations: { furnace: true }, cook: nuggets })
  const r = await smelt(w, { input: 'raw_iron', station: 'furnace', count: 3 })
  assert.strictEqual(r.ok, true)
  assert.strictEqual(r.details.processed, 1)
  assert.match(r.message, /fuel ran out after 1/)
  assert.strictEqual(w.count('raw_iron'), 2) // the rest came back
})

test('fuel burned without finishing one item says so, not that no fuel was owned', async () => {
  const w = new FakeWorld({ inventory: { raw_iron: 1, stick: 1 }, stations: { furnace: true }, cook: nuggets })
  const r = await smelt(w, { input: 'raw_iron', station: 'furnace', count: 1 })
  w.stop()
  assert.strictEqual(r.reason, 'no_fuel')
  assert.deepStrictEqual(r.details.fuel_used, { stick: 1 })
  assert.match(r.message, /owned fuel \(1 stick, now burning in the furnace\) is too little to smelt one raw_iron/)
  assert.strictEqual(w.count('raw_iron'), 1) // the input came back
})

const charcoal = (input) => (input === 'oak_log' ? { name: 'charcoal', count: 1 } : null)

test('smelting logs burns the surplus logs as fuel, never the logs it smelts (as the embedded body)', async () => {
  // A log burns 300 ticks and a charcoal needs 200: 4 logs, 2 smelted, the other 2 burned.
  let w = new FakeWorld({ inventory: { oak_log: 4 }, stations: { furnace: true }, cook: charcoal })
  let r = await smelt(w, { input: 'oak_log', station: 'furnace', count: 2 })
  w.stop()
  assert.strictEqual(r.ok, true, r.message)
  assert.deepStrictEqual(r.details, { processed: 2, fuel: { oak_log: 2 } })
  assert.deepStrictEqual(r.consumed, { oak_log: 4 })
  assert.deepStrictEqual(w.totals(), { charcoal: 2 })
  // 3 logs, 2 to smelt: one surplus log, fire for 1.5 items; the kept log comes back.
  w = new FakeWorld({ inventory: { oak_log: 3 }, stations: { furnace: true }, cook: charcoal })
  r = await smelt(w, { input: 'oak_log', station: 'furnace', count: 2 })
  w.stop()
  assert.strictEqual(r.ok, true, r.message)
  assert.deepStrictEqual(r.details, { processed: 1, fuel: { oak_log: 1 } })
  assert.match(r.message, /fuel ran out after 1/)
  assert.deepStrictEqual(w.totals(), { charcoal: 1, oak_log: 1 })
})

test('other fuel burns before surplus input, and no surplus is no_fuel with the input kept', async () => {
  let w = new FakeWorld({ inventory: { oak_log: 2 }, stations: { furnace: true }, cook: charcoal })
  let r = await smelt(w, { input: 'oak_log', station: 'furnace', count: 2 })
  w.stop()
  assert.strictEqual(r.reason, 'no_fuel')
  assert.deepStrictEqual(r.details.fuel_used, {})
  assert.match(r.message, /the 2 oak_log are all to be smelted/)
  assert.deepStrictEqual(w.totals(), { oak_log: 2 })
  // A plank (300 ticks) first, then one surplus log once the plank is burning.
  w = new FakeWorld({ inventory: { oak_log: 3, oak_planks: 1 }, stations: { furnace: true }, cook: charcoal })
  r = await smelt(w, { input: 'oak_log', station: 'furnace', count: 2 })
  w.stop()
  assert.strictEqual(r.ok, true, r.message)
  assert.deepStrictEqual(r.details, { processed: 2, fuel: { oak_log: 1, oak_planks: 1 } })
  assert.deepStrictEqual(r.consumed, { oak_log: 3, oak_planks: 1 })
  assert.deepStrictEqual(w.totals(), { charcoal: 2 })
  // With coal owned no log is burned.
  w = new FakeWorld({ inventory: { oak_log: 5, coal: 1 }, stations: { furnace: true }, cook: charcoal })
  r = await smelt(w, { input: 'oak_log', station: 'furnace', count: 2 })
  w.stop()
  assert.deepStrictEqual(r.details, { processed: 2, fuel: { coal: 1 } })
  assert.deepStrictEqual(w.totals(), { charcoal: 2, oak_log: 3 })
})

test('smelting failure reasons: missing item, no station, no fuel, unknown item', async () => {
  const base = { stations: { furnace: true }, cook: nuggets }
  assert.strictEqual((await smelt(new FakeWorld({ ...base, inventory: { raw_iron: 1 } }), { input: 'raw_iron', station: 'furnace', count: 2 })).reason, 'missing_item')
  assert.strictEqual((await smelt(new FakeWorld({ inventory: { raw_iron: 1, coal: 1 } }), { input: 'raw_iron', station: 'furnace', count: 1 })).reason, 'needs_station')
  assert.strictEqual((await smelt(new FakeWorld({ ...base, inventory: { raw_iron: 1 } }), { input: 'raw_iron', station: 'furnace', count: 1 })).reason, 'no_fuel')
  assert.strictEqual((await smelt(new FakeWorld({ ...base, inventory: {} }), { input: 'unobtainium', station: 'furnace', count: 1 })).reason, 'invalid_args')
  const walled = new FakeWorld({ ...base, stations: { furnace: true, reachable: false }, inventory: { raw_iron: 1, coal: 1 } })
  assert.strictEqual((await smelt(walled, { input: 'raw_iron', station: 'furnace', count: 1 })).reason, 'station_unreachable')
})

test('a furnace that opens no window in time is a timeout, not a missing feature', async () => {
  const w = new FakeWorld({ inventory: { raw_iron: 1, coal: 1 }, stations: { furnace: true }, cook: nuggets, opens: false })
  await assert.rejects(smelt(w, { input: 'raw_iron', station: 'furnace', count: 1 }), (err) => err.code === 'timeout')
  w.stop()
})

test('a server ticking slower than the client still finishes smelting (waits count its ticks)', async () => {
  // The server makes one game tick every 2 ms while the client ticks every 1 ms: counting the
  // client's ticks would give up after half the cooking time and report that fuel ran out.
  const w = new FakeWorld({ inventory: { raw_iron: 1, coal: 1 }, stations: { furnace: true }, cook: nuggets, ticksPerMs: 0.5, clientMsPerTick: 1 })
  const startAge = w.server.age
  const r = await smelt(w, { input: 'raw_iron', station: 'furnace', count: 1 })
  w.stop()
  assert.strictEqual(r.ok, true, r.message)
  assert.strictEqual(r.details.processed, 1, r.message)
  assert.doesNotMatch(r.message, /fuel ran out/)
  assert.deepStrictEqual(r.produced, { iron_nugget: 3 })
  assert.ok(w.server.age - startAge >= 200, 'the furnace needed 200 game ticks')
})

test('a counted cooking result in the server form (markers swapped by a tick function) is reported as the embedded body reports it', async () => {
  // M01 on a stock 1.19 server: each raw iron cooks to one barrier, which the pack's tick
  // function swaps for 3 iron nuggets. The skill reports 3 nuggets per unit, never a barrier.
  const w = new FakeWorld({ inventory: { raw_iron: 2, coal: 1, iron_nugget: 4 }, stations: { furnace: true }, cook: (input) => (input === 'raw_iron' ? { name: 'barrier', count: 1 } : null), swaps: { barrier: ['iron_nugget', 3] }, ticksPerMs: 0.05, cookTicks: 5 })
  const r = await smelt(w, { input: 'raw_iron', station: 'furnace', count: 2 })
  w.stop()
  assert.strictEqual(r.ok, true, r.message)
  assert.deepStrictEqual(r.produced, { iron_nugget: 6 }) // the 4 nuggets owned before are not multiplied
  assert.deepStrictEqual(w.totals(), { iron_nugget: 10 })
})

test('enchanting reports the enchantments the table gave', async () => {
  const w = new FakeWorld({ inventory: { iron_pickaxe: 1, lapis_lazuli: 3 }, stations: { enchanting_table: true } })
  const r = await enchant(w, { item: 'iron_pickaxe', option: 'middle' })
  assert.strictEqual(r.ok, true, r.message)
  assert.deepStrictEqual(r.produced, { iron_pickaxe: 1 })
  assert.deepStrictEqual(r.consumed, { iron_pickaxe: 1, lapis_lazuli: 2 })
  assert.deepStrictEqual(r.details, { enchantments: [['efficiency', 1]], levels_spent: 2 })
  assert.strictEqual(w.bot.experience.level, 98)
})

test('enchanting failure reasons follow the embedded body', async () => {
  const table = { stations: { enchanting_table: true } }
  assert.strictEqual((await enchant(new FakeWorld({ ...table, inventory: { lapis_lazuli: 3 } }), { item: 'iron_pickaxe', option: 'lowest' })).reason, 'missing_item')
  assert.strictEqual((await enchant(new FakeWorld({ ...table, inventory: { iron_pickaxe: 1 } }), { item: 'iron_pickaxe', option: 'highest' })).reason, 'missing_item')
  assert.strictEqual((await enchant(new FakeWorld({ ...table, inventory: { dirt: 1, lapis_lazuli: 3 } }), { item: 'dirt', option: 'lowest' })).reason, 'not_enchantable')
  assert.strictEqual((await enchant(new FakeWorld({ ...table, inventory: { iron_pickaxe: 1, lapis_lazuli: 3 }, level: 1 }), { item: 'iron_pickaxe', option: 'highest' })).reason, 'not_enough_levels')
  assert.strictEqual((await enchant(new FakeWorld({ ...table, inventory: { iron_pickaxe: 1, lapis_lazuli: 3 }, offers: [1, 0, 0] }), { item: 'iron_pickaxe', option: 'middle' })).reason, 'no_result')
  assert.strictEqual((await enchant(new FakeWorld({ inventory: { iron_pickaxe: 1, lapis_lazuli: 3 } }), { item: 'iron_pickaxe', option: 'lowest' })).reason, 'needs_station')
})
