'use strict'
// One bot session: configuration from Python, connecting, observing, and running one skill at
// a time. A disconnect or kick during a call answers that call with a "disconnected" error. A
// death ends the call at once with reason "died" (an outcome: the episode ends); the bot never
// respawns. A call that runs past its time is cancelled (path goal cleared, digging stopped,
// window closed) before its "timeout" error is sent, so nothing of it runs into the next call.

const { performance } = require('perf_hooks')
const { CODES, BridgeError } = require('./protocol')
const { parseAction } = require('./args')
const { World, delta, losses } = require('./world')
const { observe } = require('./observe')
const { ServerClock, CancelToken } = require('./clock')
const { Ledger } = require('./ledger')
const { Harvest } = require('./harvest')
const gather = require('./skills/gather')
const stations = require('./skills/stations')
const items = require('./skills/items')

const SKILLS = {
  mine: gather.mine,
  prepare_access: gather.prepare_access,
  explore: gather.explore,
  collect: gather.collect,
  ascend: gather.ascend,
  wait: gather.wait,
  craft_grid: stations.craft_grid,
  smelt: stations.smelt,
  enchant: stations.enchant,
  place: items.place,
  equip: items.equip,
  attack: items.attack,
  trade: items.trade
}

const DEFAULT_LIMITS = {
  connect_timeout_ms: 60000,
  act_timeout_ms: 240000,
  move_timeout_ms: 45000,
  explore_hop_timeout_ms: 60000,
  pickup_timeout_ms: 4000,
  window_timeout_ms: 5000,
  click_timeout_ms: 5000,
  attack_timeout_ms: 30000,
  attack_cooldown_ticks: 12,
  smelt_slack_ticks: 200,
  smelt_idle_ticks: 60,
  act_margin_ms: 15000, // a call's own budget ends this long before act_timeout_ms
  cancel_grace_ms: 5000, // how long a cancelled call may take to unwind
  dig_confirm_ticks: 20, // game ticks to wait for the server's block update after a dig
  drop_wait_ticks: 10, // game ticks to wait for a confirmed dig's drops to appear
  pickup_ticks: 40, // game ticks to wait for the server to hand over a drop walked onto
  slow_server_factor: 10, // a wait of n ticks may take n x 50 ms x this before it is a timeout
  min_ceiling_ms: 5000
}

function versions () {
  const pkg = (name) => { try { return require(`${name}/package.json`).version } catch (e) { return null } }
  return { bridge: require('../package.json').version, mineflayer: pkg('mineflayer'), mineflayer_pathfinder: pkg('mineflayer-pathfinder'), minecraft_data: pkg('minecraft-data') }
}

function requireObject (params, key) {
  const value = params[key]
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new BridgeError(CODES.INVALID_PARAMS, `"${key}" must be an object`)
  }
  return value
}

class Session {
  constructor (emit) {
    this.emit = emit
    this.config = null
    this.bot = null
    this.busy = false
    this.lostReason = null
    this.visitedRegions = new Set()
    this._onLost = null
    this.dead = null // why the player died, once it has
    this.token = null // the running call's cancel token
    this.clock = null
    this.ledger = null
  }

  methods () {
    return {
      configure: (p) => this.configure(p),
      connect: (p) => this.connect(p),
      observe: () => this.observe(),
      act: (p) => this.act(p),
      status: () => this.status(),
      disconnect: () => this.disconnect().then(() => ({ disconnected: true }))
    }
  }

  configure (params) {
    const skills = requireObject(params, 'skills')
    const body = requireObject(params, 'body')
    for (const [name, spec] of Object.entries(skills)) {
      if (!spec || !Array.isArray(spec.args)) throw new BridgeError(CODES.INVALID_PARAMS, `skill ${name} has no args list`)
    }
    for (const key of ['mine_radius', 'observe_radius', 'drop_radius', 'station_radius', 'reach', 'explore_radius', 'explore_hops', 'region_size', 'max_path_digs']) {
      if (typeof body[key] !== 'number') throw new BridgeError(CODES.INVALID_PARAMS, `body.${key} must be a number`)
    }
    const bounds = params.world_bounds || { min_x: -64, max_x: 63, min_z: -64, max_z: 63 }
    const harvest = params.harvest
    if (!harvest || typeof harvest !== 'object' || !Array.isArray(harvest.requires_tool) || typeof harvest.tags !== 'object' || typeof harvest.tools !== 'object') {
      throw new BridgeError(CODES.INVALID_PARAMS, '"harvest" must hold requires_tool, tags and tools (the active rules\' block tags)')
    }
    this.config = {
      skills,
      body,
      world_bounds: bounds,
      fuel_ticks: params.fuel_ticks || {},
      fuel_order: params.fuel_order || [],
      tools: params.tools || [],
      harvest: new Harvest(harvest),
      markers: Array.isArray(params.markers) ? params.markers.filter(m => typeof m === 'string') : [],
      limits: { ...DEFAULT_LIMITS, ...(params.limits || {}) }
    }
    return { skills: Object.keys(skills).length }
  }

  requireConfig () {
    if (!this.config) throw new BridgeError(CODES.NOT_CONNECTED, 'call "configure" first')
    return this.config
  }

  requireBot () {
    if (this.lostReason) throw new BridgeError(CODES.DISCONNECTED, `the bot is disconnected: ${this.lostReason}`)
    if (!this.bot || !this.bot.entity) throw new BridgeError(CODES.NOT_CONNECTED, 'the bot is not connected; call "connect"')
    return this.bot
  }

  async connect (params) {
    const config = this.requireConfig()
    if (this.bot) throw new BridgeError(CODES.BUSY, 'already connected')
    const { host = '127.0.0.1', port, username = 'agent', version } = params
    if (!Number.isInteger(port) || port <= 0 || port > 65535) throw new BridgeError(CODES.INVALID_PARAMS, '"port" must be a TCP port number')
    if (typeof username !== 'string' || !/^[A-Za-z0-9_]{3,16}$/.test(username)) throw new BridgeError(CODES.INVALID_PARAMS, '"username" must be 3-16 letters, digits or _')
    const mineflayer = require('mineflayer')
    const { pathfinder } = require('mineflayer-pathfinder')
    // respawn: false: a death is the end of the episode, never a fresh body.
    const bot = mineflayer.createBot({ host, port, username, auth: 'offline', version: version || false, hideErrors: true, checkTimeoutInterval: 60000, respawn: false })
    this.bot = bot
    this.lostReason = null
    this.dead = null
    const limits = config.limits
    this.clock = new ServerClock(bot._client, { slowFactor: limits.slow_server_factor, minCeilingMs: limits.min_ceiling_ms })
    const lost = (reason) => {
      if (this.lostReason) return
      this.lostReason = reason
      this.emit('disconnected', { reason })
      if (this._onLost) this._onLost(reason)
    }
    bot.on('error', (err) => this.emit('log', { level: 'error', message: String(err && err.message) }))
    const spawned = new Promise((resolve, reject) => {
      bot.once('spawn', resolve)
      bot.once('end', (reason) => reject(new BridgeError(CODES.DISCONNECTED, `connection ended before spawning: ${reason}`)))
      bot.once('kicked', (reason) => reject(new BridgeError(CODES.DISCONNECTED, `kicked before spawning: ${reason}`)))
      bot.once('error', (err) => reject(new BridgeError(CODES.DISCONNECTED, `cannot connect to ${host}:${port}: ${err.message}`)))
      setTimeout(() => reject(new BridgeError(CODES.TIMEOUT, `no spawn within ${config.limits.connect_timeout_ms} ms`)), config.limits.connect_timeout_ms)
    })
    try {
      await spawned
    } catch (err) {
      try { bot.end() } catch (e) {}
      this.bot = null
      throw err
    }
    bot.on('end', (reason) => lost(`connection ended (${reason})`))
    bot.on('kicked', (reason) => lost(`kicked: ${typeof reason === 'string' ? reason : JSON.stringify(reason)}`))
    // The last position the server gave that makes sense (after a death some servers send the
    // body's position as NaN): observations of a dead player keep showing where it died.
    this.lastPosition = bot.entity.position.floored()
    bot.on('move', () => {
      const p = bot.entity && bot.entity.position
      if (p && Number.isFinite(p.x) && Number.isFinite(p.y) && Number.isFinite(p.z) && !this.dead) this.lastPosition = p.floored()
    })
    bot.on('death', () => this.died('the player died'))
    if (!bot.isAlive || bot.health <= 0) this.died('the player was dead on arrival')
    this.ledger = new Ledger(bot)
    bot.loadPlugin(pathfinder)
    // Digging and the path finder's tool choice follow the active rules' tags (harvest.js).
    const world = () => new World(bot, config, { clock: this.clock, ledger: this.ledger })
    bot.digTime = (block) => world().digMs(block)
    bot.pathfinder.bestHarvestTool = (block) => {
      const best = config.harvest.bestTool(block.name, world().ownedNames())
      return best ? bot.inventory.items().find(i => i.name === best) || null : null
    }
    await Promise.race([bot.waitForChunksToLoad(), new Promise(resolve => setTimeout(resolve, 10000))])
    await this.clock.ticks(2, { what: 'the first game ticks after joining' })
    const pos = bot.entity.position.floored()
    return { version: bot.version, username: bot.username, position: [pos.x, pos.y, pos.z], game_mode: bot.game.gameMode }
  }

  observe () {
    const bot = this.requireBot()
    return observe(this.world(bot), { dead: Boolean(this.dead) })
  }

  world (bot, extra = {}) {
    return new World(bot, this.requireConfig(), { clock: this.clock, ledger: this.ledger, lastPosition: this.lastPosition, ...extra })
  }

  status () {
    return { connected: Boolean(this.bot && this.bot.entity && !this.lostReason), lost: this.lostReason, busy: this.busy, dead: this.dead }
  }

  // The player died: tell Python, and end the running call at once.
  died (why) {
    if (this.dead) return
    this.dead = why
    this.emit('death', { reason: why })
    if (this.token) this.token.cancel('died')
    if (this._onDeath) this._onDeath()
  }

  // Stop whatever the bot is doing for a call that is being abandoned.
  halt () {
    const bot = this.bot
    if (!bot) return
    try { bot.pathfinder.stop(); bot.pathfinder.setGoal(null) } catch (e) {}
    try { bot.stopDigging() } catch (e) {}
    try { if (bot.currentWindow) bot.closeWindow(bot.currentWindow) } catch (e) {}
    try { bot.clearControlStates() } catch (e) {}
  }

  async act (params) {
    const config = this.requireConfig()
    const bot = this.requireBot()
    if (this.busy) throw new BridgeError(CODES.BUSY, 'another action is still running')
    const parsed = parseAction(config.skills, params.skill, params.args)
    if (parsed.error) {
      const skill = typeof params.skill === 'string' && SKILLS[params.skill] ? params.skill : ''
      return { skill, args: {}, ok: false, reason: 'invalid_args', message: parsed.error, produced: {}, consumed: {}, inventory_delta: {}, details: {} }
    }
    const limits = config.limits
    if (this.dead) return diedResult(params.skill, parsed.args, this.dead, {})
    this.ledger.beginAction()
    const token = new CancelToken()
    const started = performance.now()
    const world = this.world(bot, { token, deadline: started + limits.act_timeout_ms - limits.act_margin_ms })
    this.busy = true
    this.token = token
    const before = world.rawTotals()
    const startTick = this.clock ? this.clock.now() : null
    let timer
    let run = null
    try {
      run = SKILLS[params.skill](world, parsed.args, this)
      const guard = new Promise((resolve, reject) => {
        this._onLost = (reason) => reject(new BridgeError(CODES.DISCONNECTED, `the server connection was lost during ${params.skill}: ${reason}`))
        this._onDeath = () => resolve(null)
        timer = setTimeout(() => reject(new BridgeError(CODES.TIMEOUT, `${params.skill} did not finish within ${limits.act_timeout_ms} ms`)), limits.act_timeout_ms)
      })
      run.catch(() => {}) // a rejection after the guard fired must not go unhandled
      const result = await Promise.race([run, guard])
      if (this.lostReason) throw new BridgeError(CODES.DISCONNECTED, `the server connection was lost during ${params.skill}: ${this.lostReason}`)
      if (this.dead) return diedResult(params.skill, parsed.args, this.dead, delta(before, world.rawTotals()))
      const after = world.rawTotals()
      result.inventory_delta = delta(before, after)
      // The game time the call took on the server (the embedded simulator reports its own).
      const endTick = startTick === null ? null : this.clock.now()
      if (endTick !== null) result.details = { ...result.details, ticks: Math.max(0, Math.round(endTick - startTick)) }
      // Movement may spend scaffolding blocks: report what left the inventory when the skill did not.
      if (result.ok && Object.keys(result.consumed).length === 0) result.consumed = losses(before, after)
      return result
    } catch (err) {
      if (this.dead && !this.lostReason) return diedResult(params.skill, parsed.args, this.dead, delta(before, world.rawTotals()))
      if (err instanceof BridgeError) throw err
      if (this.lostReason) throw new BridgeError(CODES.DISCONNECTED, `the server connection was lost during ${params.skill}: ${this.lostReason}`)
      throw new BridgeError(CODES.INTERNAL, `${params.skill} failed: ${err && err.message}`)
    } finally {
      clearTimeout(timer)
      this._onLost = null
      this._onDeath = null
      // Whatever ended the call, nothing of it may run on into the next one.
      token.cancel('the call ended')
      this.halt()
      if (run && !this.dead) await settleWithin(run, limits.cancel_grace_ms)
      this.halt()
      this.token = null
      this.busy = false
    }
  }

  async disconnect () {
    const bot = this.bot
    this.bot = null
    if (!bot) return
    await new Promise((resolve) => {
      const timer = setTimeout(resolve, 2000)
      bot.once('end', () => { clearTimeout(timer); resolve() })
      try { bot.quit() } catch (e) { clearTimeout(timer); resolve() }
    })
  }
}

function diedResult (skill, args, why, inventoryDelta) {
  return { skill, args, ok: false, reason: 'died', message: `${why} during ${skill}; the episode is over`, produced: {}, consumed: {}, inventory_delta: inventoryDelta, details: {} }
}

// Wait for a promise to settle, at most ms; never throws.
function settleWithin (promise, ms) {
  let timer
  return Promise.race([
    promise.then(() => {}, () => {}),
    new Promise(resolve => { timer = setTimeout(resolve, ms) })
  ]).finally(() => clearTimeout(timer))
}

module.exports = { Session, SKILLS, DEFAULT_LIMITS, versions, diedResult }
