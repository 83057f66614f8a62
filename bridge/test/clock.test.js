'use strict'
// The server's clock: game time comes from the server's time packets, never from wall time.
const test = require('node:test')
const assert = require('node:assert')
const { EventEmitter } = require('events')
const { ServerClock, CancelToken, toTicks } = require('../src/clock')

// A scripted server: `age` advances only when the test says so, and a time packet goes out
// every 20 ticks, as on vanilla.
function scripted (ceilingMs = 2000) {
  const client = new EventEmitter()
  let wall = 0
  const clock = new ServerClock(client, { now: () => wall, minCeilingMs: ceilingMs })
  const server = {
    age: 500,
    advance (ticks, ms) {
      for (let i = 0; i < ticks; i++) {
        this.age += 1
        wall += ms / ticks
        if (this.age % 20 === 0) client.emit('update_time', { age: [0, this.age] })
      }
    },
    wallPasses (ms) { wall += ms }
  }
  client.emit('update_time', { age: BigInt(server.age) })
  return { client, clock, server }
}

test('time packets are read in every encoding the protocol library uses', () => {
  assert.strictEqual(toTicks([0, 40]), 40)
  assert.strictEqual(toTicks([1, 0]), 4294967296)
  assert.strictEqual(toTicks(BigInt(77)), 77)
  assert.strictEqual(toTicks(12), 12)
  assert.strictEqual(toTicks('x'), null)
})

test('between packets the estimate never runs more than one packet interval ahead', () => {
  const { clock, server } = scripted()
  server.advance(40, 2000) // 20 ticks per second
  const last = clock.now()
  server.wallPasses(60000) // then the server goes quiet for a minute
  assert.ok(clock.now() <= last + 20, `${clock.now()} vs ${last}`)
  assert.ok(clock.now() >= last)
})

test('a wait of n ticks ends only when the server has done n ticks, however slow it is', async () => {
  const { clock, server } = scripted(10 ** 9)
  const start = server.age
  let done = false
  const waiting = clock.ticks(60).then(() => { done = true })
  // A server at 2 ticks per second: 60 ticks take 30 s of (scripted) wall time.
  for (let i = 0; i < 5; i++) {
    server.advance(10, 5000)
    await new Promise(resolve => setImmediate(resolve))
    assert.strictEqual(done, false, `ended after ${server.age - start} ticks`)
  }
  server.advance(40, 20000)
  await waiting
  assert.ok(server.age - start >= 60 - 20, 'never ends more than one packet interval early')
})

test('a stalled server ends a wait with a timeout error at the wall-clock ceiling', async () => {
  const client = new EventEmitter()
  const clock = new ServerClock(client, { minCeilingMs: 60, slowFactor: 0 })
  client.emit('update_time', { age: 100 })
  await assert.rejects(clock.ticks(200, { what: 'waiting' }), (err) => err.code === 'timeout' && /advanced \d+ of 200 ticks/.test(err.message))
})

test('until() reports whether its condition came true within n game ticks', async () => {
  const { clock, server } = scripted()
  let flag = false
  const pending = clock.until(() => flag, { ticks: 40 })
  server.advance(20, 1000)
  flag = true
  assert.strictEqual(await pending, true)
  const never = clock.until(() => false, { ticks: 40 })
  server.advance(80, 4000)
  await new Promise(resolve => setTimeout(resolve, 60))
  server.advance(20, 1000)
  assert.strictEqual(await never, false)
})

test('a cancelled wait ends at once with Cancelled', async () => {
  const { clock } = scripted()
  const token = new CancelToken()
  const waiting = clock.ticks(10000, { token, ceilingMs: 10 ** 9 })
  token.cancel('died')
  await assert.rejects(waiting, (err) => err.cancelled === true && err.why === 'died')
})
