'use strict'
// The server's clock. Game time comes from the server's time packets (a vanilla server sends
// one every 20 ticks, carrying the world's age); between packets it is interpolated at the rate
// the server has actually kept, and never runs more than one packet interval past the last
// packet. Every wait in the skills counts these ticks and has a wall-clock ceiling: a slow
// server makes a wait longer in wall time, never shorter in game time, and a stalled server
// ends it with a "timeout" error instead of a hang.

const { EventEmitter } = require('events')
const { performance } = require('perf_hooks')
const { BridgeError, CODES } = require('./protocol')

const NOMINAL_TPS = 20
const PACKET_INTERVAL = 20 // game ticks between two time packets on a vanilla server
const MAX_TPS = 60 // a server catching up after a stall runs faster than 20 for a while
const SAMPLES = 6
const NAP_MS = 50

class Cancelled extends Error {
  constructor (why) {
    super(`cancelled: ${why}`)
    this.cancelled = true
    this.why = why
  }
}

// Cancels what a skill is waiting on (a timeout, a death, a lost connection).
class CancelToken extends EventEmitter {
  constructor () {
    super()
    this.reason = null
    this.setMaxListeners(0)
  }

  cancel (why) {
    if (this.reason) return
    this.reason = why
    this.emit('cancel', why)
  }

  get cancelled () { return this.reason !== null }

  check () {
    if (this.reason) throw new Cancelled(this.reason)
  }
}

function toTicks (age) {
  if (typeof age === 'bigint') return Number(age)
  if (Array.isArray(age) && age.length === 2) return age[0] * 4294967296 + (age[1] >>> 0)
  if (typeof age === 'number') return age
  return null
}

class ServerClock extends EventEmitter {
  // client: emits the protocol's 'update_time' packets ({age, time}).
  constructor (client, { now, slowFactor = 10, minCeilingMs = 5000 } = {}) {
    super()
    this.setMaxListeners(0)
    this._now = now || (() => performance.now())
    this.slowFactor = slowFactor
    this.minCeilingMs = minCeilingMs
    this.samples = []
    this.rate = NOMINAL_TPS / 1000 // game ticks per wall millisecond
    this.floor = -Infinity
    this.packets = 0
    if (client) client.on('update_time', (packet) => this.observe(toTicks(packet.age)))
  }

  // One time packet: the world's age in ticks.
  observe (age) {
    if (age === null || !Number.isFinite(age)) return
    const at = this._now()
    const prev = this.samples[this.samples.length - 1]
    if (prev) {
      const jump = age - prev[0]
      const fast = at > prev[1] ? jump / (at - prev[1]) : Infinity
      // The age went back (a new world) or leapt (the first real packet after a placeholder):
      // start measuring again from here.
      if (jump < 0 || (jump > 2 * PACKET_INTERVAL && fast > (2 * MAX_TPS) / 1000)) {
        this.samples = []
        this.floor = -Infinity
      }
    }
    this.samples.push([age, at])
    while (this.samples.length > SAMPLES) this.samples.shift()
    // The slower of the rate over the last few packets and over the last interval: after a
    // slowdown the estimate slows at the next packet, so a wait rarely ends early; after a
    // speed-up it catches up over a few packets (waits run a little long, never short).
    const n = this.samples.length
    if (n >= 2) {
      const [a0, t0] = this.samples[0]
      const [a1, t1] = this.samples[n - 2]
      const window = at > t0 && age > a0 ? (age - a0) / (at - t0) : null
      const recent = at > t1 && age > a1 ? (age - a1) / (at - t1) : null
      const rates = [window, recent].filter(r => r !== null)
      if (rates.length) this.rate = Math.min(...rates, MAX_TPS / 1000)
    }
    this.packets += 1
    this.emit('time', age)
  }

  get known () { return this.samples.length > 0 }

  // The server's game time now (estimated between packets), or null before the first packet.
  now () {
    const last = this.samples[this.samples.length - 1]
    if (!last) return null
    const ahead = Math.min(Math.max(0, this._now() - last[1]) * this.rate, PACKET_INTERVAL)
    this.floor = Math.max(this.floor, last[0] + ahead)
    return this.floor
  }

  ceilingFor (ticks) {
    return Math.max(this.minCeilingMs, (ticks * 1000 / NOMINAL_TPS) * this.slowFactor)
  }

  // Sleep up to ms, waking early on a time packet or a cancellation.
  _nap (ms, token) {
    return new Promise((resolve) => {
      let timer = null
      const done = () => {
        clearTimeout(timer)
        this.removeListener('time', done)
        if (token) token.removeListener('cancel', done)
        resolve()
      }
      timer = setTimeout(done, Math.max(1, ms))
      this.once('time', done)
      if (token) token.once('cancel', done)
    })
  }

  async _start (deadline, token, what) {
    while (!this.known) {
      if (token) token.check()
      if (this._now() >= deadline) {
        throw new BridgeError(CODES.TIMEOUT, `${what}: the server sent no game time`)
      }
      await this._nap(Math.min(NAP_MS * 4, deadline - this._now()), token)
    }
    return this.now()
  }

  // Wait until `ticks` game ticks have passed. Past the ceiling: a "timeout" BridgeError.
  async ticks (ticks, { ceilingMs, token, what = 'waiting' } = {}) {
    if (!(ticks > 0)) return 0
    const began = this._now()
    const ceiling = ceilingMs || this.ceilingFor(ticks)
    const deadline = began + ceiling
    const start = await this._start(deadline, token, what)
    const target = start + ticks
    for (;;) {
      if (token) token.check()
      const current = this.now()
      if (current >= target) return current - start
      if (this._now() >= deadline) {
        throw new BridgeError(CODES.TIMEOUT, `${what}: the server's game time advanced ${Math.floor(current - start)} of ${ticks} ticks in ${Math.round(ceiling)} ms`)
      }
      const wantMs = (target - current) / this.rate
      await this._nap(Math.min(wantMs, NAP_MS * 4, deadline - this._now()), token)
    }
  }

  // Wait until check() is true (checked on every nap and on `events`), for at most `ticks` game
  // ticks or the wall-clock ceiling. Returns true when check() became true, false otherwise.
  async until (check, { ticks, ceilingMs, token, emitters = [] } = {}) {
    if (check()) return true
    const began = this._now()
    const ceiling = ceilingMs || this.ceilingFor(ticks)
    const deadline = began + ceiling
    let start = this.now()
    const poke = []
    const wake = { fn: null }
    const nudge = () => { if (wake.fn) wake.fn() }
    for (const [emitter, name] of emitters) { emitter.on(name, nudge); poke.push([emitter, name]) }
    try {
      for (;;) {
        if (token) token.check()
        if (check()) return true
        if (start === null) start = this.now()
        const current = this.now()
        if (start !== null && current - start >= ticks) return check()
        if (this._now() >= deadline) return check()
        await new Promise((resolve) => {
          wake.fn = resolve
          this._nap(Math.min(NAP_MS, deadline - this._now()), token).then(resolve)
        })
        wake.fn = null
      }
    } finally {
      for (const [emitter, name] of poke) emitter.removeListener(name, nudge)
    }
  }
}

module.exports = { ServerClock, CancelToken, Cancelled, toTicks, NOMINAL_TPS, PACKET_INTERVAL }
