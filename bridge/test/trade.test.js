'use strict'
// trade against a scripted villager window: what the game refuses (a sold-out offer, a price
// raised by demand, a second input not owned, mineflayer refusing the trade) is an action
// failure the agent sees, never an error that Python would retry as a bridge fault.
const test = require('node:test')
const assert = require('node:assert')
const { trade } = require('../src/skills/items')

function offer (extra = {}) {
  return { inputItem1: { name: 'emerald', count: 1 }, outputItem: { name: 'bread', count: 6 }, hasItem2: false, tradeDisabled: false, nbTradeUses: 0, maximumNbTradeUses: 12, realPrice: 1, ...extra }
}

function world ({ inventory = { emerald: 3 }, trades = [offer()], refuse = null } = {}) {
  const counts = { ...inventory }
  const window = { trades, closed: false, close () { this.closed = true } }
  const villager = { name: 'villager', position: { x: 1, y: 64, z: 1 } }
  const bot = {
    openVillager: async () => window,
    trade: async (win, index) => {
      if (refuse) throw new Error(refuse)
      const t = win.trades[index]
      counts[t.inputItem1.name] -= t.realPrice
      counts[t.outputItem.name] = (counts[t.outputItem.name] || 0) + t.outputItem.count
    }
  }
  return {
    bot,
    window,
    body: { mine_radius: 8 },
    config: { limits: { window_timeout_ms: 50, click_timeout_ms: 50 } },
    livingEntities: () => [villager],
    dist2: () => 2,
    goto: async () => ({ ok: true }),
    count: (name) => counts[name] || 0,
    totals: () => ({ ...counts }),
    ticks: async () => 2,
    checkCancelled: () => {}
  }
}

const args = { with: 'villager', give: 'emerald', get: 'bread', count: 1 }

test('a trade the villager makes reports what the inventory gained', async () => {
  const w = world()
  const r = await trade(w, args)
  assert.strictEqual(r.ok, true, r.message)
  assert.deepStrictEqual(r.produced, { bread: 6 })
  assert.ok(w.window.closed)
})

test('a sold-out offer is no_result, not an error', async () => {
  const w = world({ trades: [offer({ nbTradeUses: 12 })] })
  const r = await trade(w, args)
  assert.strictEqual(r.ok, false)
  assert.strictEqual(r.reason, 'no_result')
  assert.match(r.message, /sold out/)
  assert.ok(w.window.closed)
})

test('a price raised by demand, or a second input not owned, is missing_item', async () => {
  const dear = await trade(world({ inventory: { emerald: 2 }, trades: [offer({ realPrice: 3 })] }), args)
  assert.strictEqual(dear.reason, 'missing_item')
  assert.match(dear.message, /needs 3 emerald/)
  const two = await trade(world({ trades: [offer({ hasItem2: true, inputItem2: { name: 'book', count: 1 } })] }), args)
  assert.strictEqual(two.reason, 'missing_item')
  assert.match(two.message, /also needs 1 book/)
})

test('mineflayer refusing the trade is an action failure, not a thrown error', async () => {
  const w = world({ refuse: 'Not enough item 1 to trade' })
  const r = await trade(w, args)
  assert.strictEqual(r.ok, false)
  assert.strictEqual(r.reason, 'no_result')
  assert.match(r.message, /refused the trade: Not enough item 1/)
  assert.ok(w.window.closed)
})
