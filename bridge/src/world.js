'use strict'
// Shared machinery of the skills: names, inventory snapshots, block search, movement with
// bounded digging, tool choice, and picking up drops. Failure reasons match the embedded body.

const { performance } = require('perf_hooks')
const { Vec3 } = require('vec3')
const { goals, Movements } = require('mineflayer-pathfinder')
const { nearestPositions } = require('./scan')
const { BridgeError, CODES } = require('./protocol')

const INVENTORY_SLOTS = [5, 46] // armour, main, hotbar and off-hand: where skills take items from
const OFF_HAND = 45
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
  // ctx: {clock, ledger, harvest, token, deadline} from the session (see session.js).
  constructor (bot, config, ctx = {}) {
    this.bot = bot
    this.config = config
    this.body = config.body
    this.registry = bot.registry
    this.pathDigs = 0
    this.clock = ctx.clock
    this.ledger = ctx.ledger || null
    this.harvest = ctx.harvest || config.harvest
    this.token = ctx.token || null
    this.deadline = ctx.deadline || Infinity
    this.lastPosition = ctx.lastPosition || null
  }

  get limits () { return this.config.limits }

  // -- time ---------------------------------------------------------------------------------
  // Wall-clock milliseconds left before the call's own budget (inside the act timeout) runs out.
  timeLeft () { return this.deadline - performance.now() }

  // Wait game ticks on the server's clock (a "timeout" error if the server stalls).
  async ticks (n, what) {
    return this.clock.ticks(n, { token: this.token, what: what || `waiting ${n} ticks` })
  }

  // Wait until check() holds, for at most `ticks` game ticks; true when it held.
  async until (check, ticks, emitters) {
    return this.clock.until(check, { ticks, token: this.token, emitters: emitters || [] })
  }

  checkCancelled () { if (this.token) this.token.check() }

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
  // Every stack the player owns: the inventory window's crafting grid, armour, main, hotbar and
  // off-hand slots, the cursor, and while a crafting table is open its grid and cursor (the
  // server gives those back when the window closes). The result slot is a preview, not owned.
  owned () {
    const bot = this.bot
    const inv = bot.inventory
    const out = []
    const open = bot.currentWindow && bot.currentWindow !== inv ? bot.currentWindow : null
    if (open) {
      out.push(...open.slots.slice(open.inventoryStart, open.inventoryEnd))
      out.push(...inv.slots.slice(INVENTORY_SLOTS[0], INVENTORY_SLOTS[0] + 4), inv.slots[OFF_HAND])
      if (String(open.type).startsWith('minecraft:crafting')) out.push(...open.slots.slice(1, open.inventoryStart))
      out.push(open.selectedItem)
      out.push(...inv.slots.slice(1, 5))
    } else {
      out.push(...inv.slots.slice(1, INVENTORY_SLOTS[1]))
      out.push(inv.selectedItem)
    }
    return out.filter(Boolean)
  }

  slots () {
    return this.bot.inventory.slots.slice(INVENTORY_SLOTS[0], INVENTORY_SLOTS[1]).filter(Boolean)
  }

  // What the player owns, item -> count (the observation's inventory).
  rawTotals () {
    const out = {}
    for (const item of this.owned()) out[item.name] = (out[item.name] || 0) + item.count
    return sortedObject(out)
  }

  // rawTotals less what this call picked up that belongs to an earlier action: what a skill may
  // report as produced.
  totals () {
    const out = this.rawTotals()
    const stale = this.ledger ? this.ledger.staleGain : {}
    for (const [name, n] of Object.entries(stale)) {
      if (out[name] !== undefined) {
        out[name] -= n
        if (out[name] <= 0) delete out[name]
      }
    }
    return out
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
  feet () {
    const p = this.bot.entity.position
    if (this.lastPosition && !(Number.isFinite(p.x) && Number.isFinite(p.y) && Number.isFinite(p.z))) return this.lastPosition
    return p.floored()
  }

  dist2 (pos, from) {
    const f = from || this.feet()
    const dx = Math.floor(pos.x) - f.x; const dy = Math.floor(pos.y) - f.y; const dz = Math.floor(pos.z) - f.z
    return dx * dx + dy * dy + dz * dz
  }

  nearestBlocks (names, radius, k, { horizontal = false } = {}) {
    return nearestPositions(this.bot, names, this.feet(), radius, k, horizontal)
  }

  // -- tools (from the active rules' block tags, never minecraft-data's tiers) -------------
  ownedNames () {
    return new Set(this.bot.inventory.items().map(i => i.name))
  }

  canHarvest (blockName) {
    const info = this.registry.blocksByName[blockName]
    if (!info || info.diggable === false || info.hardness === null || info.hardness < 0) return false
    return this.harvest.canHarvestWithAny(blockName, this.ownedNames())
  }

  canClear (block) {
    if (!block || block.boundingBox === 'empty') return true
    if (block.hardness === null || block.hardness < 0 || block.diggable === false) return false
    return this.canHarvest(block.name)
  }

  async equipBestTool (block) {
    const best = this.harvest.bestTool(block.name, this.ownedNames())
    if (best) {
      const item = this.findItem(best, { plain: false })
      if (item) await withCeiling(this.bot.equip(item, 'hand'), this.limits.click_timeout_ms, `equipping ${best}`)
    }
    return best
  }

  // Dig time in ms from the active tags (mineflayer's dig waits this long before finishing).
  digMs (block) {
    const bot = this.bot
    const held = bot.heldItem
    const helmet = bot.inventory.slots[ARMOR_SLOTS.head]
    const level = (item, name) => {
      const e = item && (item.enchants || []).find(x => String(x.name).replace(/^minecraft:/, '') === name)
      return e ? e.lvl : 0
    }
    const effect = (name) => {
      const info = this.registry.effectsByName && this.registry.effectsByName[name]
      const active = info && bot.entity.effects ? bot.entity.effects[info.id] : null
      return active ? active.amplifier + 1 : 0
    }
    const ticks = this.harvest.digTicks(block.name, block.hardness, held ? held.name : null, {
      efficiency: level(held, 'efficiency'),
      haste: effect('Haste'),
      fatigue: effect('MiningFatigue'),
      inWater: Boolean(bot.entity.isInWater),
      aquaAffinity: level(helmet, 'aqua_affinity') > 0,
      onGround: bot.entity.onGround !== false
    })
    return ticks * 50
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
    const owned = this.ownedNames()
    for (const block of this.registry.blocksArray) {
      if (!this.harvest.canHarvestWithAny(block.name, owned)) m.blocksCantBreak.add(block.id)
    }
    for (const name of this.body.facilities || []) {
      const b = this.registry.blocksByName[name]
      if (b) m.blocksCantBreak.add(b.id)
    }
    return m
  }

  // Move toward a goal, digging at most maxDigs blocks, within the call's time budget; never
  // throws (except when the call is cancelled).
  async goto (goal, { timeoutMs, maxDigs } = {}) {
    const bot = this.bot
    this.checkCancelled()
    const limit = maxDigs === undefined ? this.body.max_path_digs : maxDigs
    const timeout = Math.min(timeoutMs || this.limits.move_timeout_ms, this.timeLeft())
    if (timeout <= 0) return { ok: false, digs: 0, why: 'out_of_time', message: 'no time left in this call' }
    bot.pathfinder.setMovements(this.movements())
    let digs = 0
    let stoppedFor = null
    const stop = (why) => { stoppedFor = stoppedFor || why; bot.pathfinder.stop(); bot.pathfinder.setGoal(null) }
    const onDig = () => {
      digs += 1
      this.pathDigs += 1
      if (digs > limit) stop('too_many_digs')
    }
    const onCancel = () => stop('cancelled')
    bot.on('diggingCompleted', onDig)
    if (this.token) this.token.once('cancel', onCancel)
    const timer = setTimeout(() => stop(timeout < (timeoutMs || this.limits.move_timeout_ms) ? 'out_of_time' : 'timeout'), timeout)
    try {
      if (goal.isEnd(bot.entity.position.floored())) return { ok: true, digs: 0 }
      await bot.pathfinder.goto(goal)
      return { ok: true, digs }
    } catch (err) {
      this.checkCancelled()
      return { ok: false, digs, why: stoppedFor || (err && err.name === 'NoPath' ? 'no_path' : 'stopped'), message: String(err && err.message) }
    } finally {
      clearTimeout(timer)
      bot.removeListener('diggingCompleted', onDig)
      if (this.token) this.token.removeListener('cancel', onCancel)
      bot.pathfinder.setGoal(null)
      bot.clearControlStates()
    }
  }

  reachGoal (pos) {
    return new goals.GoalLookAtBlock(pos, this.bot.world, { reach: this.body.reach })
  }

  // -- digging the server confirmed ------------------------------------------------------------
  // Dig a block and wait for the server's own block update at its position. Returns
  // {ok: true, since} when the server changed the block, or {ok: false, why} when it sent the
  // block back ("refused") or said nothing within dig_confirm_ticks ("no_answer"). `since` marks
  // the item spawns that may be this block's drops.
  async digConfirmed (block) {
    const bot = this.bot
    const original = block.stateId
    const watch = this.ledger.watchBlock(block.position)
    this.ledger.clearPending(block.position)
    const since = this.ledger.seq
    const onCancel = () => { try { bot.stopDigging() } catch (e) {} }
    if (this.token) this.token.once('cancel', onCancel)
    try {
      try {
        await bot.dig(block, true)
      } catch (err) {
        this.checkCancelled()
        return { ok: false, why: 'dig_failed', message: String(err && err.message) }
      }
      const changed = () => watch.state !== undefined && watch.state !== original
      const confirmed = await this.until(changed, this.limits.dig_confirm_ticks)
      if (confirmed) return { ok: true, since }
      if (watch.state === original) return { ok: false, why: 'refused' } // the block is still there
      this.ledger.addPending(block.position)
      return { ok: false, why: 'no_answer' }
    } finally {
      watch.stop()
      if (this.token) this.token.removeListener('cancel', onCancel)
    }
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

  // The drops the server spawned for a confirmed dig (spawns after `since` near the block), then
  // walk over each and wait for the server's pickup, all bounded in game ticks.
  async collectDrops (center, radius, since) {
    const ledger = this.ledger
    const near = () => ledger.itemsNear(center, radius, since)
    const spawned = await this.until(() => near().length > 0, this.limits.drop_wait_ticks, [[this.bot._client, 'spawn_entity']])
    if (!spawned) return []
    await this.ticks(1, 'waiting for the rest of the drops')
    const drops = near()
    for (const drop of drops) {
      if (ledger.collected.has(drop.id) || drop.gone) continue
      const entity = this.bot.entities[drop.id]
      if (entity) {
        const target = entity.position.floored()
        await this.goto(new goals.GoalBlock(target.x, target.y, target.z), { timeoutMs: this.limits.pickup_timeout_ms, maxDigs: 2 })
      }
      await this.until(() => ledger.collected.has(drop.id) || Boolean(ledger.items.get(drop.id) && ledger.items.get(drop.id).gone) || !ledger.items.has(drop.id), this.limits.pickup_ticks, [[this.bot, 'playerCollect']])
    }
    return drops
  }

  async waitGone (entity, ticks) {
    return this.until(() => !this.bot.entities[entity.id], ticks, [[this.bot, 'entityGone']])
  }

  seenItemIds () {
    return new Set(this.itemEntities().map(e => e.id))
  }
}

// A promise with a wall-clock ceiling: past it, a "timeout" BridgeError saying what hung.
function withCeiling (promise, ms, what) {
  let timer
  const limit = new Promise((resolve, reject) => {
    timer = setTimeout(() => reject(new BridgeError(CODES.TIMEOUT, `${what}: the server did not answer within ${ms} ms`)), ms)
  })
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer))
}

module.exports = { World, failure, success, delta, gains, losses, addCounts, sortedObject, sleep, withCeiling, ARMOR_SLOTS, INVENTORY_SLOTS, Vec3, goals }
