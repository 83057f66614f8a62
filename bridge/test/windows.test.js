'use strict'
// craft_grid's window clicks against a scripted window (no server, no recipe lookups).
const test = require('node:test')
const assert = require('node:assert')
const { craftGrid } = require('../src/windows')
const { FakeItem, FakeWindow, FakeBot, totals } = require('./fake_window')

// The "server rules" of these tests: a log alone gives 2 planks (a changed rule), two planks
// stacked give 4 sticks, anything else nothing.
function serverRules (grid) {
  const cells = grid.flat().filter(Boolean)
  if (cells.length === 1 && cells[0] === 'oak_log') return { name: 'oak_planks', count: 2 }
  const g = grid.map(r => r.join(','))
  if (grid[0][0] === 'oak_planks' && grid[1] && grid[1][0] === 'oak_planks' && cells.length === 2) return { name: 'stick', count: 4 }
  if (g.length && cells.length === 0) return null
  return null
}

test('the grid is filled by clicks and the server result is taken', async () => {
  const window = new FakeWindow({ width: 2, inventory: [new FakeItem('oak_log', 3)], craft: serverRules })
  const bot = new FakeBot(window)
  const result = await craftGrid(bot, window, [['oak_log', null], [null, null]], 2, { settleTicks: 0 })
  assert.deepStrictEqual(result, { name: 'oak_planks', count: 2 })
  assert.deepStrictEqual(totals(window), { oak_log: 2, oak_planks: 2 })
  assert.strictEqual(window.selectedItem, null)
  for (let s = 0; s <= 4; s++) assert.strictEqual(window.slots[s], null, `slot ${s} is empty again`)
})

test('each cell gets exactly one item, rows top to bottom', async () => {
  const window = new FakeWindow({ width: 3, inventory: [new FakeItem('oak_planks', 5)], craft: serverRules })
  const bot = new FakeBot(window)
  const result = await craftGrid(bot, window, [['oak_planks', null], ['oak_planks', null]], 3, { settleTicks: 0 })
  assert.deepStrictEqual(result, { name: 'stick', count: 4 })
  const rightClicks = window.clicks.filter(c => c[1] === 1).map(c => c[0])
  assert.deepStrictEqual(rightClicks, [1, 4]) // (0,0) and (1,0) of a 3-wide grid
  assert.deepStrictEqual(totals(window), { oak_planks: 3, stick: 4 })
})

test('an empty result slot returns every item to the inventory', async () => {
  const window = new FakeWindow({ width: 2, inventory: [new FakeItem('oak_log', 2), new FakeItem('dirt', 1)], craft: serverRules })
  const bot = new FakeBot(window)
  const result = await craftGrid(bot, window, [['oak_log', 'dirt'], [null, 'oak_log']], 2, { settleTicks: 0 })
  assert.strictEqual(result, null)
  assert.deepStrictEqual(totals(window), { oak_log: 2, dirt: 1 })
  for (let s = 0; s <= 4; s++) assert.strictEqual(window.slots[s], null)
})

test('a server that never answers is an error, not a hang', async () => {
  const window = new FakeWindow({ width: 2, inventory: [new FakeItem('oak_log', 1)], craft: serverRules, answer: false })
  const bot = new FakeBot(window)
  await assert.rejects(craftGrid(bot, window, [['oak_log']], 2, { clickMs: 50, settleTicks: 0 }), (err) => err.code === 'timeout')
})

test('a craft that fails half-way gives the grid and the cursor back (nothing stranded)', async () => {
  // Two logs go into the grid; the click that takes the result is lost: the craft fails with a
  // timeout, and both logs are back in the inventory, the grid and the cursor empty.
  const window = new FakeWindow({ width: 2, inventory: [new FakeItem('oak_log', 2)], craft: () => ({ name: 'oak_planks', count: 4 }), dropClick: 0 })
  const bot = new FakeBot(window)
  await assert.rejects(craftGrid(bot, window, [['oak_log', 'oak_log']], 2, { clickMs: 30, settleTicks: 0 }), (err) => err.code === 'timeout')
  assert.deepStrictEqual(totals(window), { oak_log: 2 })
  assert.strictEqual(window.selectedItem, null)
  for (let s = 1; s <= 4; s++) assert.strictEqual(window.slots[s], null, `grid slot ${s} is empty`)
})

test('a craft that fails while placing items gives back what was placed', async () => {
  const window = new FakeWindow({ width: 2, inventory: [new FakeItem('oak_log', 3)], craft: serverRules, dropClick: 2 })
  const bot = new FakeBot(window)
  await assert.rejects(craftGrid(bot, window, [['oak_log', 'oak_log']], 2, { clickMs: 30, settleTicks: 0 }), (err) => err.code === 'timeout')
  assert.deepStrictEqual(totals(window), { oak_log: 3 })
  assert.strictEqual(window.selectedItem, null)
})

test('plain items are preferred over enchanted ones as ingredients', async () => {
  const window = new FakeWindow({
    width: 2,
    inventory: [new FakeItem('oak_log', 1, [{ name: 'efficiency', lvl: 1 }]), new FakeItem('oak_log', 1)],
    craft: serverRules
  })
  const bot = new FakeBot(window)
  await craftGrid(bot, window, [['oak_log']], 2, { settleTicks: 0 })
  const left = window.slots.filter(Boolean).filter(i => i.name === 'oak_log')
  assert.strictEqual(left.length, 1)
  assert.strictEqual(left[0].enchants.length, 1)
})
