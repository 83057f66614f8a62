'use strict'
// place, equip, attack and trade.

const { performance } = require('perf_hooks')
const { failure, success, gains, withCeiling, goals, Vec3 } = require('../world')
const { blocked } = require('./gather')
const { BridgeError } = require('../protocol')

const ARMOR = { helmet: ['head', 'head'], chestplate: ['torso', 'chest'], leggings: ['legs', 'legs'], boots: ['feet', 'feet'] }
const NEIGHBOURS = [[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1]]
const TIERS = ['netherite', 'diamond', 'iron', 'stone', 'golden', 'wooden']

// Offsets within two blocks of the feet, nearest first, in the embedded body's fixed order.
const SPOTS = (() => {
  const cells = []
  for (let dx = -2; dx <= 2; dx++) {
    for (let dy = -1; dy <= 2; dy++) {
      for (let dz = -2; dz <= 2; dz++) {
        if (dx === 0 && dz === 0 && (dy === 0 || dy === 1)) continue
        cells.push([dx, dy, dz])
      }
    }
  }
  const key = c => [c[0] ** 2 + c[1] ** 2 + c[2] ** 2, c[1] !== 0 ? 1 : 0, c[0], c[1], c[2]]
  return cells.sort((a, b) => {
    const ka = key(a); const kb = key(b)
    for (let i = 0; i < ka.length; i++) if (ka[i] !== kb[i]) return ka[i] - kb[i]
    return 0
  })
})()

function isOpen (block) {
  return block && (block.name === 'air' || block.name === 'cave_air' || block.boundingBox === 'empty') && block.name !== 'water' && block.name !== 'lava'
}

function solid (block) {
  return block && block.boundingBox === 'block'
}

function freeSpot (w) {
  const feet = w.feet()
  let fallback = null
  for (const [dx, dy, dz] of SPOTS) {
    const pos = feet.offset(dx, dy, dz)
    const here = w.bot.blockAt(pos)
    if (!isOpen(here)) continue
    const below = w.bot.blockAt(pos.offset(0, -1, 0))
    if (solid(below)) return { pos, ref: below, face: new Vec3(0, 1, 0) }
    if (!fallback) {
      for (const [a, b, c] of NEIGHBOURS) {
        const n = w.bot.blockAt(pos.offset(a, b, c))
        if (solid(n)) { fallback = { pos, ref: n, face: new Vec3(-a, -b, -c) }; break }
      }
    }
  }
  return fallback
}

async function place (w, args) {
  const block = args.block
  if (!w.isItem(block)) return failure('place', args, 'invalid_args', `'${block}' is not a known item id`)
  const item = w.findItem(block)
  if (!item) return failure('place', args, 'missing_item', `no ${block} in the inventory`)
  if (!w.isBlock(block)) return failure('place', args, 'not_placeable', `${block} is not a block that can be placed`)
  const before = w.totals()
  let spot = freeSpot(w)
  if (!spot) {
    // Clear one local obstruction to make room, as the body may within a call.
    const feet = w.feet()
    const clearable = SPOTS.map(([dx, dy, dz]) => w.bot.blockAt(feet.offset(dx, dy, dz))).find(b => solid(b) && w.canClear(b))
    if (!clearable) return failure('place', args, 'no_spot', 'no open spot next to the body, and nothing nearby can be cleared')
    await w.equipBestTool(clearable)
    const dig = await w.digConfirmed(clearable)
    if (!dig.ok) return failure('place', args, 'no_spot', `no open spot next to the body, and the server kept the ${clearable.name} that was in the way`)
    await w.collectDrops(clearable.position.offset(0.5, 0.5, 0.5), 1.5, dig.since)
    spot = freeSpot(w)
    if (!spot) return failure('place', args, 'no_spot', 'no open spot next to the body')
  }
  await withCeiling(w.bot.equip(w.findItem(block), 'hand'), w.config.limits.click_timeout_ms, `holding ${block}`)
  try {
    await withCeiling(w.bot.placeBlock(spot.ref, spot.face), w.config.limits.click_timeout_ms, `placing ${block}`)
  } catch (err) {
    w.checkCancelled()
    // The server not answering in time is the bridge's fault, not the agent's: re-raise it.
    if (err instanceof BridgeError) throw err
    const now = w.bot.blockAt(spot.pos)
    if (!now || now.name !== block) return failure('place', args, 'no_spot', `placing ${block} failed: ${err.message}`)
  }
  const after = w.totals()
  return success('place', args, `placed ${block}`, {
    produced: gains(before, after),
    consumed: { [block]: 1 },
    details: { position: [spot.pos.x, spot.pos.y, spot.pos.z] }
  })
}

async function equip (w, args) {
  const item = args.item
  if (!w.isItem(item)) return failure('equip', args, 'invalid_args', `'${item}' is not a known item id`)
  const owned = w.findItem(item) || w.slots().find(i => i.name === item)
  if (!owned) return failure('equip', args, 'missing_item', `no ${item} in the inventory`)
  if ((w.body.facilities || []).includes(item)) return failure('equip', args, 'not_equippable', `${item} is a facility: use place`)
  for (const [suffix, [dest, slot]] of Object.entries(ARMOR)) {
    if (item.endsWith('_' + suffix)) {
      if (owned.slot < 5 || owned.slot > 8) await withCeiling(w.bot.equip(owned, dest), w.config.limits.click_timeout_ms, `wearing ${item}`)
      return success('equip', args, `wearing ${item}`, { details: { slot } })
    }
  }
  await withCeiling(w.bot.equip(owned, 'hand'), w.config.limits.click_timeout_ms, `holding ${item}`)
  return success('equip', args, `holding ${item}`, { details: { slot: 'hand' } })
}

function bestWeapon (w) {
  const owned = w.bot.inventory.items()
  const rank = item => {
    const [tier, kind] = item.name.split('_')
    const t = TIERS.indexOf(tier)
    if (t < 0 || !['sword', 'axe'].includes(kind)) return -1
    return (kind === 'sword' ? 100 : 0) + (TIERS.length - t) * 10 + (item.enchants && item.enchants.length ? 1 : 0)
  }
  const ranked = owned.filter(i => rank(i) >= 0).sort((a, b) => rank(b) - rank(a))
  return ranked[0] || null
}

async function attack (w, args) {
  const { target, count } = args
  if (target === 'player') return failure('attack', args, 'invalid_args', 'players are never valid targets')
  if (!w.isEntity(target)) return failure('attack', args, 'invalid_args', `'${target}' is not a known living-entity id`)
  const before = w.totals()
  const weapon = bestWeapon(w)
  if (weapon) await withCeiling(w.bot.equip(weapon, 'hand'), w.config.limits.click_timeout_ms, `holding ${weapon.name}`)
  const radius = w.body.mine_radius
  let killed = 0
  let problem = null
  for (let i = 0; i < count; i++) {
    const mobs = w.livingEntities().filter(e => e.name === target)
      .map(e => ({ e, d2: w.dist2(e.position) })).filter(m => m.d2 <= radius * radius)
      .sort((a, b) => a.d2 - b.d2 || a.e.id - b.e.id)
    if (!mobs.length) {
      problem = failure('attack', args, 'no_target_nearby', `no ${target} within ${radius} blocks`)
      break
    }
    const mob = mobs[0].e
    const since = w.ledger.seq
    let lastPos = mob.position.clone()
    const deadline = performance.now() + Math.min(w.config.limits.attack_timeout_ms, w.timeLeft())
    while (w.bot.entities[mob.id] && performance.now() < deadline) {
      lastPos = mob.position.clone()
      if (w.bot.entity.position.distanceTo(mob.position) > 3) {
        const move = await w.goto(new goals.GoalNear(mob.position.x, mob.position.y, mob.position.z, 2), { timeoutMs: 5000, maxDigs: 8 })
        if (!move.ok && w.bot.entity.position.distanceTo(mob.position) > 4) { problem = blocked('attack', args, target, move); break }
      }
      await w.bot.lookAt(mob.position.offset(0, (mob.height || 1) * 0.8, 0), true)
      w.bot.attack(mob)
      await w.ticks(w.config.limits.attack_cooldown_ticks, 'the attack cooldown')
    }
    if (w.bot.entities[mob.id]) {
      problem = problem || failure('attack', args, 'target_unreachable', `could not defeat the ${target} in time`)
      break
    }
    killed += 1
    await w.collectDrops(lastPos, 5, since)
  }
  if (killed === 0) return problem
  let message = `defeated ${killed} of ${count} ${target}`
  if (problem) message += `; stopped: ${problem.message}`
  return success('attack', args, message, { produced: gains(before, w.totals()), details: { killed } })
}

async function trade (w, args) {
  const villagers = w.livingEntities().filter(e => e.name === 'villager')
    .map(e => ({ e, d2: w.dist2(e.position) })).filter(m => m.d2 <= w.body.mine_radius ** 2)
    .sort((a, b) => a.d2 - b.d2)
  if (!villagers.length) return failure('trade', args, 'no_target_nearby', 'no villager nearby')
  const villager = villagers[0].e
  await w.goto(new goals.GoalNear(villager.position.x, villager.position.y, villager.position.z, 2))
  const before = w.totals()
  const limits = w.config.limits
  let window
  try {
    window = await withCeiling(w.bot.openVillager(villager), limits.window_timeout_ms, 'opening the trade window')
  } catch (err) {
    if (err instanceof BridgeError) throw err
    return failure('trade', args, 'no_result', 'the villager offered no such trade')
  }
  try {
    const trades = window.trades || []
    const index = trades.findIndex(t => t.inputItem1 && t.inputItem1.name === args.give && t.outputItem && t.outputItem.name === args.get)
    if (index < 0) return failure('trade', args, 'no_result', 'the villager offered no such trade')
    const offer = trades[index]
    // What the game refuses is the agent's failure, never a bridge fault: a sold-out offer,
    // a price raised by demand (realPrice, not the listed count), a second input not owned.
    if (offer.tradeDisabled || (Number.isFinite(offer.maximumNbTradeUses) && offer.maximumNbTradeUses - (offer.nbTradeUses || 0) <= 0)) {
      return failure('trade', args, 'no_result', 'the villager does not make this trade any more (sold out)')
    }
    const price = Number.isFinite(offer.realPrice) && offer.realPrice > 0 ? offer.realPrice : offer.inputItem1.count
    if (w.count(args.give) < price) return failure('trade', args, 'missing_item', `the trade needs ${price} ${args.give}`, { item: args.give })
    const second = offer.hasItem2 && offer.inputItem2 ? offer.inputItem2 : null
    if (second && w.count(second.name) < second.count) {
      return failure('trade', args, 'missing_item', `the trade also needs ${second.count} ${second.name}`, { item: second.name })
    }
    try {
      await withCeiling(w.bot.trade(window, index, 1), limits.click_timeout_ms * 4, 'trading')
    } catch (err) {
      if (err instanceof BridgeError) throw err
      w.checkCancelled()
      return failure('trade', args, 'no_result', `the villager refused the trade: ${err && err.message}`)
    }
  } finally {
    window.close()
  }
  await w.ticks(2, 'the trade to settle')
  return success('trade', args, `traded ${args.give} for ${args.get}`, { produced: gains(before, w.totals()) })
}

module.exports = { place, equip, attack, trade, freeSpot, SPOTS }
