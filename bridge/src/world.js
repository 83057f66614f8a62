'use strict'
// Shared machinery of the skills: names, inventory snapshots, block search, movement with
// bounded digging, tool choice, and picking up drops. Failure reasons match the embedded body.

const { Vec3 } = require('vec3')
const { goals, Movements } = require('mineflayer-pathfinder')
const { nearestPositions } = require('./scan')

const INVENTORY_SLOTS = [5, 46] // armour, main, hotbar and off-hand (not the crafting grid)
const ARMOR_SLOTS = { head: 5, chest: 6, legs: 7, feet: 8 }
const NOT_LIVING = new Set(['item', 'experience_orb', 'arrow', 'falling_block', 'tnt', 'painting', 'item_frame', 'glow_item_frame', 'armor_stand', 'marker', 'area_effect_cloud', 'fishing_bobber', 'lightning_bolt'])

function failure (skill, args, reason, message, details) {
  return { skill, args, ok: false, reason, message, produced: {}, consumed: {}, inventory_delta: {}, details: details || {} }
}

function success (skill, args, message, extra) {
  return { skill, args, ok: true, reason: '', message, produced: {}, consumed: {}, inventory_delta: {}, details: {}, ...extra }
}

function sortedObject (obj) {
  const out = {}
  for (const key of Object.keys(obj).sort()) out[key] = obj[key]
  return out
}

function delta (before, after) {
  const out = {}
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const d = (after[key] || 0) - (before[key] || 0)
    if (d !== 0) out[key] = d
  }
  return sortedObject(out)
}

function gains (before, after) {
  const out = {}
  for (const [k, v] of Object.entries(delta(before, after))) if (v > 0) out[k] = v
  return out
}

function losses (before, after) {
  const out = {}
  for (const [k, v] of Object.entries(delta(before, after))) if (v < 0) out[k] = -v
  return out
}

function addCounts (a, b) {
  const out = { ...a }
  for (const [k, v] of Object.entries(b)) out[k] = (out[k] || 0) + v
  return sortedObject(out)
}

function sleep (ms) {
  return new Promise(resolve => setTimeout(resolve, ms))
}

class World {
  constructor (bot, config) {
    this.bot = bot
    this.config = config
    this.body = config.body
    this.registry = bot.registry
    this.pathDigs = 0
  }

  // -- names ------------------------------------------------------------------------
  blockNames (target) {
    const alias = this.body.aliases && this.body.aliases[target]
    if (alias) return alias.filter(n => this.registry.blocksByName[n]).sort()
    if (this.registry.blocksByName[target]) return [target]
    return null
  }

  isItem (name) { return Boolean(this.registry.itemsByName[name]) }
  isBlock (name) { return Boolean(this.registry.blocksByName[name]) }
  isEntity (name) { return Boolean(this.registry.entitiesByName[name]) }

  // -- inventory ----------------------------------------------------------------------
  slots () {
    return this.bot.inventory.slots.slice(INVENTORY_SLOTS[0], INVENTORY_SLOTS[1]).filter(Boolean)
  }

  totals () {
    const out = {}
    for (const item of this.slots()) out[item.name] = (out[item.name] || 0) + item.count
    return sortedObject(out)
  }

  count (name) {
    return this.slots().filter(i => i.name === name).reduce((n, i) => n + i.count, 0)
  }

  findItem (name, { plain = false } = {}) {
    const items = this.bot.inventory.items().filter(i => i.name === name)
    const chosen = plain ? items.filter(i => !(i.enchants && i.enchants.length)) : items
    return chosen[0] || null
  }

  hasRoomFor (name) {
    const inv = this.bot.inventory
    if (inv.emptySlotCount() > 0) return true
    return inv.items().some(i => i.name === name && i.count < i.stackSize)
  }

  // -- positions ------------------------------------------------------------------------
  feet () { return this.bot.entity.position.floored() }

  dist2 (pos, from) {
    const f = from || this.feet()
    const dx = Math.floor(pos.x) - f.x; const dy = Math.floor(pos.y) - f.y; const dz = Math.floor(pos.z) - f.z
    return dx * dx + dy * dy + dz * dz
  }

  nearestBlocks (names, radius, k, { horizontal = false } = {}) {
    return nearestPositions(this.bot, names, this.feet(), radius, k, horizontal)
  }

  // -- tools ----------------------------------------------------------------------------
  ownedTypes () {
    return new Set(this.bot.inventory.items().map(i => i.type))
  }

  canHarvest (blockName) {
    const block = this.registry.blocksByName[blockName]
    if (!block) return false
    if (!block.harvestTools) return true
    const owned = this.ownedTypes()
    return Object.keys(block.harvestTools).some(id => owned.has(Number(id)))
  }

  canClear (block) {
    if (!block || block.boundingBox === 'empty') return true
    if (block.hardness === null || block.hardness < 0 || block.diggable === false) return false
    return this.canHarvest(block.name)
  }

  async equipBestTool (block) {
    const info = this.registry.blocksByName[block.name]
    const owned = this.bot.inventory.items()
    const harvesting = info && info.harvestTools ? owned.filter(i => info.harvestTools[i.type]) : owned
    let best = null; let fastest = Infinity
    for (const tool of harvesting) {
      const t = block.digTime(tool.type, false, false, false, [], this.bot.entity.effects)
      if (t < fastest) { fastest = t; best = tool }
    }
    const handTime = block.digTime(null, false, false, false, [], this.bot.entity.effects)
    if (best && fastest < handTime) await this.bot.equip(best, 'hand')
    return best ? best.name : null
  }

  // -- movement -------------------------------------------------------------------------
  movements () {
    const m = new Movements(this.bot)
    m.canDig = true
    m.allowParkour = false
    m.allow1by1towers = true
    m.allowSprinting = true
    m.canOpenDoors = false
    const disposable = new Set(this.body.disposable_blocks || [])
    m.scafoldingBlocks = this.bot.inventory.items().filter(i => disposable.has(i.name)).map(i => i.type)
    for (const block of this.registry.blocksArray) {
      if (block.harvestTools && !this.canHarvest(block.name)) m.blocksCantBreak.add(block.id)
    }
    for (const name of this.body.facilities || []) {
      const b = this.registry.blocksByName[name]
      if (b) m.blocksCantBreak.add(b.id)
    }
    return m
  }

  // Move toward a goal, digging at most maxDigs blocks; never throws.
  async goto (goal, { timeoutMs, maxDigs } = {}) {
    const bot = this.bot
    const limit = maxDigs === undefined ? this.body.max_path_digs : maxDigs
    const timeout = timeoutMs || this.config.limits.move_timeout_ms
    bot.pathfinder.setMovements(this.movements())
    let digs = 0
    let stoppedFor = null
    const onDig = () => {
      digs += 1
      this.pathDigs += 1
      if (digs > limit) { stoppedFor = 'too_many_digs'; bot.pathfinder.stop() }
    }
    bot.on('diggingCompleted', onDig)
    const timer = setTimeout(() => { stoppedFor = stoppedFor || 'timeout'; bot.pathfinder.stop(); bot.pathfinder.setGoal(null) }, timeout)
    try {
      if (goal.isEnd(bot.entity.position.floored())) return { ok: true, digs: 0 }
      await bot.pathfinder.goto(goal)
      return { ok: true, digs }
    } catch (err) {
      return { ok: false, digs, why: stoppedFor || (err && err.name === 'NoPath' ? 'no_path' : 'stopped'), message: String(err && err.message) }
    } finally {
      clearTimeout(timer)
      bot.removeListener('diggingCompleted', onDig)
      bot.pathfinder.setGoal(null)
      bot.clearControlStates()
    }
  }

  reachGoal (pos) {
    return new goals.GoalLookAtBlock(pos, this.bot.world, { reach: this.body.reach })
  }

  // -- drops --------------------------------------------------------------------------------
  droppedItem (entity) {
    if (!entity || entity.name !== 'item') return null
    let raw = null
    for (const entry of entity.metadata || []) {
      if (entry && typeof entry === 'object' && ('itemId' in entry || 'present' in entry)) raw = entry
    }
    if (!raw || raw.present === false || raw.itemId === undefined) return null
    const item = this.registry.items[raw.itemId]
    return item ? { name: item.name, count: raw.itemCount || 1 } : null
  }

  itemEntities () {
    return Object.values(this.bot.entities).filter(e => e.name === 'item' && e.isValid !== false)
  }

  livingEntities () {
    return Object.values(this.bot.entities).filter(e => e !== this.bot.entity && e.name && !NOT_LIVING.has(e.name) && e.type !== 'player' && e.isValid !== false)
  }

  // Walk over fresh item entities near `pos` (not in `seen`) so they are picked up.
  async collectNear (pos, radius, seen) {
    await this.bot.waitForTicks(4)
    const fresh = this.itemEntities().filter(e => !seen.has(e.id) && e.position.distanceTo(pos) <= radius)
    for (const entity of fresh) {
      if (!this.bot.entities[entity.id]) continue
      const target = entity.position.floored()
      await this.goto(new goals.GoalBlock(target.x, target.y, target.z), { timeoutMs: this.config.limits.pickup_timeout_ms, maxDigs: 2 })
      await this.waitGone(entity, 20)
    }
  }

  async waitGone (entity, ticks) {
    for (let i = 0; i < ticks && this.bot.entities[entity.id]; i++) await this.bot.waitForTicks(1)
    return !this.bot.entities[entity.id]
  }

  seenItemIds () {
    return new Set(this.itemEntities().map(e => e.id))
  }
}

module.exports = { World, failure, success, delta, gains, losses, addCounts, sortedObject, sleep, ARMOR_SLOTS, Vec3, goals }
