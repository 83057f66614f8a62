'use strict'
// The raw observation the Python side turns into the embedded backend's Observation schema:
// inventory, equipment, position, survival, experience, and nearby blocks / drops / entities
// with squared block distances (Python rounds and sorts them exactly as the embedded body does).

const { ARMOR_SLOTS } = require('./world')
const { nearestPerName } = require('./scan')

function enchantments (item) {
  const out = {}
  for (const e of item.enchants || []) out[String(e.name).replace(/^minecraft:/, '')] = e.lvl
  return out
}

function observe (world, { dead = false } = {}) {
  const bot = world.bot
  const body = world.body
  const feet = world.feet()
  const enchanted = []
  for (const item of world.owned()) {
    const ench = enchantments(item)
    if (Object.keys(ench).length) enchanted.push({ item: item.name, count: item.count, enchantments: ench })
  }
  enchanted.sort((a, b) => (a.item < b.item ? -1 : a.item > b.item ? 1 : 0))
  const equipped = { hand: bot.heldItem ? bot.heldItem.name : null }
  for (const [slot, index] of Object.entries(ARMOR_SLOTS)) {
    const item = bot.inventory.slots[index]
    equipped[slot] = item ? item.name : null
  }
  // Nearest squared distance of every observable block id within the radius.
  const observable = (body.observable_blocks || []).filter(n => world.isBlock(n))
  const nearest = observable.length ? nearestPerName(bot, observable, feet, body.observe_radius) : {}
  const drops = []
  const dropR2 = body.drop_radius * body.drop_radius
  for (const entity of world.itemEntities()) {
    const item = world.droppedItem(entity)
    const d2 = world.dist2(entity.position, feet)
    if (item && d2 <= dropR2) drops.push({ item: item.name, count: item.count, d2 })
  }
  const entities = []
  const obsR2 = body.observe_radius * body.observe_radius
  for (const entity of world.livingEntities()) {
    const d2 = world.dist2(entity.position, feet)
    if (d2 <= obsR2) entities.push({ type: entity.name, d2 })
  }
  return {
    inventory: world.rawTotals(),
    enchanted_items: enchanted,
    equipped,
    position: [feet.x, feet.y, feet.z],
    dimension: bot.game ? bot.game.dimension : null,
    health: typeof bot.health === 'number' ? bot.health : 0,
    food: typeof bot.food === 'number' ? bot.food : 0,
    alive: !dead && bot.isAlive !== false && typeof bot.health === 'number' && bot.health > 0,
    experience_level: bot.experience ? bot.experience.level : 0,
    blocks: Object.entries(nearest).map(([block, d2]) => ({ block, d2 })).sort((a, b) => a.d2 - b.d2 || (a.block < b.block ? -1 : 1)),
    drops,
    entities
  }
}

module.exports = { observe }
