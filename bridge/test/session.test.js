'use strict'
// A call's life in the session: budgets inside the act timeout, cancellation before the next
// call, and a death that ends the call at once. Runs against a fake bot (test/fake_bot.js).
const test = require('node:test')
const assert = require('node:assert')
const { Vec3 } = require('vec3')
const { Session, SKILLS } = require('../src/session')
const { World } = require('../src/world')
const { ServerClock } = require('../src/clock')
const { Ledger } = require('../src/ledger')
const { FakeBot } = require('./fake_bot')

const SPECS = {
  wait: { args: [{ name: 'ticks', type: 'int', required: false, default: 20, min: 1, max: 1200 }] },
  mine: { args: [{ name: 'block', type: 'id', required: true }, { name: 'count', type: 'int', required: false, default: 1, min: 1, max: 4 }] }
}
const BODY = { mine_radius: 32, observe_radius: 32, drop_radius: 12, station_radius: 32, reach: 4, explore_radius: 48, explore_hops: 2, region_size: 32, max_path_digs: 160 }
const HARVEST = { requires_tool: [], tags: {}, tools: {} }

function session (limits, bot = new FakeBot()) {
  const s = new Session(() => {})
  s.configure({ skills: SPECS, body: BODY, harvest: HARVEST, limits })
  s.bot = bot
  s.clock = new ServerClock(bot._client, { minCeilingMs: 60000 })
  s.clock.observe(bot.age)
  s.ledger = new Ledger(bot)
  return s
}

function withSkill (name, fn, body) {
  const saved = SKILLS[name]
  SKILLS[name] = fn
  return body().finally(() => { SKILLS[name] = saved })
}

test('a call that runs past the act timeout is cancelled and unwound before its error is sent', async () => {
  const s = session({ act_timeout_ms: 150, act_margin_ms: 50, cancel_grace_ms: 2000 })
  const state = { unwound: false, cancelled: null }
  await withSkill('wait', async (w) => {
    try {
      await w.ticks(10 ** 6, 'a very long wait')
    } catch (err) {
      state.cancelled = err.why
      throw err
    } finally {
      state.unwound = true
    }
  }, async () => {
    await assert.rejects(s.act({ skill: 'wait', args: { ticks: 5 } }), (err) => err.code === 'timeout')
  })
  assert.strictEqual(state.unwound, true, 'the skill finished unwinding before act answered')
  assert.strictEqual(state.cancelled, 'the call ended')
  const names = s.bot.calls.map(c => c[0])
  assert.ok(names.includes('stop') && names.includes('stopDigging') && names.includes('clearControlStates'), names.join(','))
  assert.deepStrictEqual(s.bot.calls.filter(c => c[0] === 'setGoal').pop(), ['setGoal', null])
  assert.strictEqual(s.busy, false)
  // The next call runs normally (the real wait skill, on the server's clock).
  const next = await s.act({ skill: 'wait', args: { ticks: 2 } })
  assert.strictEqual(next.ok, true, next.message)
  s.bot.end()
})

test('a death ends the running call at once with reason died, and every later call too', async () => {
  const s = session({ act_timeout_ms: 60000 })
  let calls = 0
  await withSkill('wait', async (w) => { calls += 1; await w.ticks(10 ** 6) }, async () => {
    const pending = s.act({ skill: 'wait', args: { ticks: 5 } })
    setTimeout(() => s.died('the player died'), 30)
    const result = await pending
    assert.strictEqual(result.ok, false)
    assert.strictEqual(result.reason, 'died')
    const later = await s.act({ skill: 'wait', args: { ticks: 5 } })
    assert.strictEqual(later.reason, 'died')
  })
  assert.strictEqual(calls, 1, 'nothing runs after the death')
  assert.strictEqual(s.status().dead, 'the player died')
  s.bot.end()
})

test('mine spends its candidates inside the act timeout: target_unreachable, not a timeout', async () => {
  // Eight stone blocks, none reachable (the path finder never arrives), a 450 ms move timeout
  // each: 3.6 s in all, against a 900 ms act timeout. The call must give up in time.
  const s = session({ act_timeout_ms: 900, act_margin_ms: 300, move_timeout_ms: 450, cancel_grace_ms: 2000 })
  const saved = { nearestBlocks: World.prototype.nearestBlocks, reachGoal: World.prototype.reachGoal, movements: World.prototype.movements }
  World.prototype.nearestBlocks = () => Array.from({ length: 8 }, (_, i) => ({ pos: new Vec3(10 + i, 5, 10), name: 'stone', d2: 200 + i }))
  World.prototype.reachGoal = () => ({ isEnd: () => false })
  World.prototype.movements = () => ({})
  try {
    const result = await s.act({ skill: 'mine', args: { block: 'stone', count: 1 } })
    assert.strictEqual(result.ok, false)
    assert.strictEqual(result.reason, 'target_unreachable', result.message)
    assert.match(result.message, /ran out of time/)
    assert.ok(s.bot.gotos >= 1 && s.bot.gotos < 8, `${s.bot.gotos} candidates tried`)
  } finally {
    Object.assign(World.prototype, saved)
    s.bot.end()
  }
})

test('every result says how many of the server\'s game ticks its call took', async () => {
  const s = session({ act_timeout_ms: 60000 })
  await withSkill('wait', async (w, args) => {
    await w.ticks(3, 'a skill that takes three ticks')
    return { skill: 'wait', args, ok: true, reason: '', message: 'done', produced: {}, consumed: {}, inventory_delta: {}, details: { mine: 1 } }
  }, async () => {
    const result = await s.act({ skill: 'wait', args: { ticks: 1 } })
    assert.strictEqual(result.ok, true, result.message)
    assert.strictEqual(result.details.mine, 1) // the skill's own details are kept
    assert.ok(Number.isInteger(result.details.ticks) && result.details.ticks >= 3, JSON.stringify(result.details))
  })
  s.bot.end()
})
