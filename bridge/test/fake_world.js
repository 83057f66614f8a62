'use strict'
// A scripted World for unit tests of the station skills: an inventory as name -> count, stations
// at fixed spots, and furnace / enchanting-table windows driven by scripted "server rules".
// The "server" ticks on its own timer (ticksPerMs game ticks per millisecond) and sends a time
// packet every 20 ticks, as vanilla does; the skills wait on a real ServerClock fed by those
// packets. The client's own tick (bot.waitForTicks) is clientMsPerTick long: a server slower
// than the client is one where ticksPerMs < 1 / clientMsPerTick.

const { EventEmitter } = require('events')
const { FakeItem } = require('./fake_window')
const { ServerClock } = require('../src/clock')

const LIMITS = { window_timeout_ms: 50, click_timeout_ms: 50, smelt_slack_ticks: 200, smelt_idle_ticks: 60 }

class FakeServerTicks {
  constructor (ticksPerMs, onTick) {
    this.client = new EventEmitter()
    this.age = 1000
    this.ticksPerMs = ticksPerMs
    this.onTick = onTick
    this.owed = 0
    this.client.emit('update_time', { age: this.age })
    this.timer = setInterval(() => this.advance(), 1)
    this.timer.unref()
  }

  advance () {
    this.owed += this.ticksPerMs
    while (this.owed >= 1) {
      this.owed -= 1
      this.age += 1
      this.onTick(1)
      if (this.age % 20 === 0) this.client.emit('update_time', { age: this.age })
    }
  }

  stop () { clearInterval(this.timer) }
}

class FakeFurnace extends EventEmitter {
  constructor (world, cook, cookTicks = 200) {
    super()
    this.world = world
    this.cook = cook // input name -> {name, count} | null (the server's cooking recipes)
    this.cookTicks = cookTicks
    this.slots = [null, null, null]
    this.burn = 0
    this.progress = 0
    this.closed = false
  }

  inputItem () { return this.slots[0] }
  fuelItem () { return this.slots[1] }
  outputItem () { return this.slots[2] }

  async putInput (type, meta, count) { this._put(0, type, count) }
  async putFuel (type, meta, count) { this._put(1, type, count) }

  _put (slot, type, count) {
    const name = this.world.registry.items[type].name
    this.world.take(name, count)
    const have = this.slots[slot]
    this.slots[slot] = new FakeItem(name, (have ? have.count : 0) + count)
  }

  async takeOutput () { this._take(2) }
  async takeInput () { this._take(0) }
  async takeFuel () { this._take(1) }

  _take (slot) {
    const item = this.slots[slot]
    if (item) this.world.give(item.name, item.count)
    this.slots[slot] = null
  }

  tick (ticks) {
    const perItem = this.cookTicks
    for (let t = 0; t < ticks; t++) {
      const input = this.slots[0]
      const out = input ? this.cook(input.name) : null
      if (!input || !out) { this.progress = 0; continue }
      if (this.burn <= 0) {
        const fuel = this.slots[1]
        if (!fuel) { this.progress = 0; continue }
        this.burn = this.world.config.fuel_ticks[fuel.name]
        fuel.count -= 1
        if (fuel.count === 0) this.slots[1] = null
      }
      this.burn -= 1
      this.progress += 1
      if (this.progress >= perItem) {
        this.progress = 0
        input.count -= 1
        if (input.count === 0) this.slots[0] = null
        const have = this.slots[2]
        this.slots[2] = new FakeItem(out.name, (have ? have.count : 0) + out.count)
      }
    }
  }

  close () { this.closed = true }
}

class FakeTable extends EventEmitter {
  constructor (world, offers, result) {
    super()
    this.world = world
    this.enchantments = offers.map(level => ({ level }))
    this.result = result
    this.slots = [null, null]
    this.closed = false
  }

  targetItem () { return this.slots[0] }
  async putTargetItem (item) { this.world.take(item.name, 1); this.slots[0] = new FakeItem(item.name, 1); setImmediate(() => this.emit('ready')) }
  async putLapis (item) { const n = this.world.count('lapis_lazuli'); this.world.take('lapis_lazuli', n); this.slots[1] = new FakeItem('lapis_lazuli', n) }
  async enchant (choice) {
    const cost = choice + 1
    this.slots[1].count -= cost
    this.world.bot.experience.level -= cost
    const item = new FakeItem(this.slots[0].name, 1, this.result)
    this.slots[0] = item
    return item
  }

  async takeTargetItem () { const it = this.slots[0]; this.slots[0] = null; this.world.give(it.name, 1, it.enchants) }
  close () { this.closed = true }
}

class FakeWorld {
  // swaps: marker -> [item, count], what the server form's tick function does (server_form.py).
  constructor ({ inventory = {}, stations = {}, cook = () => null, offers = [1, 2, 3], enchantResult = [{ name: 'efficiency', lvl: 1 }], opens = true, level = 100, ticksPerMs = 4, clientMsPerTick = 1, swaps = {}, cookTicks = 200 }) {
    this.inv = { ...inventory }
    this.enchanted = []
    this.stations = stations // block name -> true
    const names = ['raw_iron', 'iron_nugget', 'iron_ingot', 'coal', 'oak_planks', 'stick', 'dirt', 'iron_pickaxe', 'lapis_lazuli', 'book', 'oak_log', 'barrier', 'charcoal']
    const items = names.map((name, id) => ({ name, id }))
    this.registry = { items, itemsByName: Object.fromEntries(items.map(i => [i.name, { ...i, maxDurability: name(i) }])) }
    function name (i) { return i.name.endsWith('pickaxe') ? 250 : undefined }
    this.config = { limits: LIMITS, fuel_ticks: { coal: 1600, charcoal: 1600, oak_planks: 300, oak_log: 300, stick: 100 }, fuel_order: ['coal', 'charcoal', 'oak_planks', 'oak_log', 'stick'], tools: ['iron_pickaxe'], body: { station_radius: 32, facilities: ['furnace', 'crafting_table'] }, markers: ['barrier'] }
    this.body = this.config.body
    this.furnace = new FakeFurnace(this, cook, cookTicks)
    this.table = new FakeTable(this, offers, enchantResult)
    const world = this
    this.swaps = swaps
    this.server = new FakeServerTicks(ticksPerMs, (n) => { world.furnace.tick(n); world.swapMarkers() })
    this.clock = new ServerClock(this.server.client, { minCeilingMs: 5000 })
    this.clock.observe(this.server.age)
    this.bot = {
      experience: { level },
      inventory: {},
      async waitForTicks (n) { await new Promise(resolve => setTimeout(resolve, n * clientMsPerTick)) },
      // Only the shift-click on the furnace output (slot 2) is scripted.
      async clickWindow (slot, button, mode) {
        if (slot !== 2 || mode !== 1) throw new Error(`unexpected click ${slot}/${button}/${mode}`)
        world.furnace._take(2)
      },
      async openFurnace () { if (!opens) return new Promise(() => {}); return world.furnace },
      async openEnchantmentTable () { if (!opens) return new Promise(() => {}); return world.table },
      blockAt: (pos) => ({ name: pos.name, position: pos }),
      async putAway () {}
    }
  }

  get limits () { return this.config.limits }
  async ticks (n, what) { return this.clock.ticks(n, { what }) }
  async until (check, ticks, emitters) { return this.clock.until(check, { ticks, emitters }) }
  checkCancelled () {}
  timeLeft () { return Infinity }
  stop () { this.server.stop() }

  isItem (name) { return Boolean(this.registry.itemsByName[name]) }
  count (name) { return this.inv[name] || 0 }
  take (name, n) { this.inv[name] -= n; if (this.inv[name] <= 0) delete this.inv[name] }
  give (name, n, enchants) {
    if (enchants && enchants.length) this.enchanted.push({ name, enchants })
    this.inv[name] = (this.inv[name] || 0) + n
  }

  totals () { return Object.fromEntries(Object.entries(this.inv).sort()) }
  owned () { return this.slots() }

  // The server form's tick function: every marker held becomes `count` of the real result
  // (here 8 ticks late, as a busy server might be: the skill must wait for the swap).
  swapMarkers () {
    for (const [marker, [item, count]] of Object.entries(this.swaps)) {
      const n = this.count(marker)
      if (n === 0) { this.markerSince = null; continue }
      if (this.markerSince === null || this.markerSince === undefined) this.markerSince = this.server.age
      if (this.server.age - this.markerSince < 8) continue
      this.take(marker, n)
      this.give(item, n * count)
      this.markerSince = null
    }
  }
  slots () { return Object.entries(this.inv).map(([name, count]) => new FakeItem(name, count)) }
  findItem (name) { return this.inv[name] ? new FakeItem(name, this.inv[name]) : null }
  nearestBlocks (names) { return names.filter(n => this.stations[n]).map(n => ({ pos: { name: n }, name: n, d2: 4 })) }
  async goto () { return { ok: this.stations.reachable !== false, digs: 0 } }
  reachGoal (pos) { return pos }
}

module.exports = { FakeWorld }
