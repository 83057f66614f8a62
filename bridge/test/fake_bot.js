'use strict'
// A stand-in for a mineflayer bot for session-level tests: an inventory, a path finder that
// walks until it is stopped (or never arrives), a server that sends time packets on its own
// timer, and a record of every stop/cancel call the bridge makes.

const { EventEmitter } = require('events')
const { Vec3 } = require('vec3')

class FakePathfinder {
  constructor (bot) {
    this.bot = bot
    this.goal = null
    this._reject = null
  }

  setMovements () {}
  setGoal (goal) { this.goal = goal; this.bot.calls.push(['setGoal', goal === null ? null : 'goal']) }
  stop () {
    this.bot.calls.push(['stop'])
    if (this._reject) { const r = this._reject; this._reject = null; r(Object.assign(new Error('Path was stopped'), { name: 'PathStopped' })) }
  }

  // The target is never reached: the goto ends only when the bridge stops it.
  goto (goal) {
    this.goal = goal
    this.bot.gotos += 1
    return new Promise((resolve, reject) => { this._reject = reject })
  }
}

class FakeBot extends EventEmitter {
  constructor ({ ticksPerMs = 1, blocks = ['stone'] } = {}) {
    super()
    this.calls = []
    this.gotos = 0
    this._client = new EventEmitter()
    this.registry = {
      blocksByName: Object.fromEntries(blocks.map((name, id) => [name, { id, name }])),
      blocksArray: blocks.map((name, id) => ({ id, name })),
      itemsByName: {},
      items: {},
      entitiesByName: { item: { id: 44 } },
      effectsByName: {}
    }
    this.inventory = { slots: new Array(46).fill(null), selectedItem: null, items: () => [] }
    this.currentWindow = null
    this.entity = { position: new Vec3(0.5, 5, 0.5), effects: {}, onGround: true }
    this.entities = {}
    this.health = 20
    this.isAlive = true
    this.pathfinder = new FakePathfinder(this)
    this.age = 100
    this.owed = 0
    this.timer = setInterval(() => {
      this.owed += ticksPerMs
      while (this.owed >= 1) {
        this.owed -= 1
        this.age += 1
        if (this.age % 20 === 0) this._client.emit('update_time', { age: this.age })
      }
    }, 1)
    this.timer.unref()
  }

  stopDigging () { this.calls.push(['stopDigging']) }
  clearControlStates () { this.calls.push(['clearControlStates']) }
  closeWindow (w) { this.calls.push(['closeWindow']); this.currentWindow = null }
  blockAt () { return null }
  end () { clearInterval(this.timer) }
}

module.exports = { FakeBot }
