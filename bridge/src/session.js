'use strict'
// One bot session: configuration from Python, connecting, observing, and running one skill at
// a time. A disconnect or kick during a call answers that call with a "disconnected" error.

const { CODES, BridgeError } = require('./protocol')
const { parseAction } = require('./args')
const { World, delta, losses } = require('./world')
const { observe } = require('./observe')
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
  smelt_idle_ticks: 60
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
    this.config = {
      skills,
      body,
      world_bounds: bounds,
      fuel_ticks: params.fuel_ticks || {},
      fuel_order: params.fuel_order || [],
      tools: params.tools || [],
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
    const bot = mineflayer.createBot({ host, port, username, auth: 'offline', version: version || false, hideErrors: true, checkTimeoutInterval: 60000 })
    this.bot = bot
    this.lostReason = null
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
    bot.loadPlugin(pathfinder)
    await Promise.race([bot.waitForChunksToLoad(), new Promise(resolve => setTimeout(resolve, 10000))])
    await bot.waitForTicks(2)
    const pos = bot.entity.position.floored()
    return { version: bot.version, username: bot.username, position: [pos.x, pos.y, pos.z], game_mode: bot.game.gameMode }
  }

  observe () {
    const bot = this.requireBot()
    return observe(new World(bot, this.requireConfig()))
  }

  status () {
    return { connected: Boolean(this.bot && this.bot.entity && !this.lostReason), lost: this.lostReason, busy: this.busy }
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
    const world = new World(bot, config)
    this.busy = true
    const before = world.totals()
    let timer
    try {
      const run = SKILLS[params.skill](world, parsed.args, this)
      const guard = new Promise((resolve, reject) => {
        this._onLost = (reason) => reject(new BridgeError(CODES.DISCONNECTED, `the server connection was lost during ${params.skill}: ${reason}`))
        timer = setTimeout(() => reject(new BridgeError(CODES.TIMEOUT, `${params.skill} did not finish within ${config.limits.act_timeout_ms} ms`)), config.limits.act_timeout_ms)
      })
      run.catch(() => {}) // a rejection after the guard fired must not go unhandled
      const result = await Promise.race([run, guard])
      if (this.lostReason) throw new BridgeError(CODES.DISCONNECTED, `the server connection was lost during ${params.skill}: ${this.lostReason}`)
      const after = world.totals()
      result.inventory_delta = delta(before, after)
      // Movement may spend scaffolding blocks: report what left the inventory when the skill did not.
      if (result.ok && Object.keys(result.consumed).length === 0) result.consumed = losses(before, after)
      return result
    } catch (err) {
      if (err instanceof BridgeError) throw err
      if (this.lostReason) throw new BridgeError(CODES.DISCONNECTED, `the server connection was lost during ${params.skill}: ${this.lostReason}`)
      throw new BridgeError(CODES.INTERNAL, `${params.skill} failed: ${err && err.message}`)
    } finally {
      clearTimeout(timer)
      this._onLost = null
      this.busy = false
      try { bot.pathfinder.setGoal(null); bot.clearControlStates() } catch (e) {}
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

module.exports = { Session, SKILLS, DEFAULT_LIMITS, versions }
