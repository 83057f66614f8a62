'use strict'
// craft_grid, smelt and enchant: the skills whose outcome the server's rules decide. Crafting
// clicks the grid and reads the result slot; smelting uses the furnace window; enchanting the
// enchanting-table window. Nothing here consults a recipe.

const { failure, success, gains, losses, sortedObject } = require('../world')
const { blocked } = require('./gather')
const { craftGrid, withTimeout } = require('../windows')
const { BridgeError, CODES } = require('../protocol')

const GRID = { inventory: 2, crafting_table: 3 }
const OPTION_COST = { lowest: 1, middle: 2, highest: 3 }
const COOK_TICKS = { furnace: 200, blast_furnace: 100, smoker: 100 }

async function findStation (w, block, skill, args) {
  const hits = w.nearestBlocks([block], w.body.station_radius, 3)
  if (!hits.length) {
    const reason = block === 'crafting_table' ? 'needs_table' : 'needs_station'
    return { problem: failure(skill, args, reason, `no placed ${block} nearby`) }
  }
  for (const hit of hits) {
    const move = await w.goto(w.reachGoal(hit.pos))
    if (move.ok) return { block: w.bot.blockAt(hit.pos) }
  }
  return { problem: failure(skill, args, 'station_unreachable', `the nearby ${block} cannot be reached; try prepare_access`) }
}

async function openWindow (w, block, what) {
  let onOpen
  const opened = new Promise(resolve => { onOpen = resolve; w.bot.once('windowOpen', resolve) })
  try {
    await withTimeout(w.bot.activateBlock(block), w.config.limits.click_timeout_ms, `using the ${what}`)
    return await withTimeout(opened, w.config.limits.window_timeout_ms, `opening the ${what}`)
  } finally {
    w.bot.removeListener('windowOpen', onOpen)
  }
}

async function craftGridSkill (w, args) {
  const { station, grid } = args
  const size = GRID[station]
  if (grid.length > size || grid[0].length > size) {
    return failure('craft_grid', args, 'invalid_args', `a grid wider or taller than ${size} needs station=crafting_table`)
  }
  const need = {}
  for (const row of grid) {
    for (const cell of row) {
      if (cell === null) continue
      if (!w.isItem(cell)) return failure('craft_grid', args, 'invalid_args', `'${cell}' is not a known item id`)
      need[cell] = (need[cell] || 0) + 1
    }
  }
  if (!Object.keys(need).length) return failure('craft_grid', args, 'invalid_args', 'the grid is empty')
  for (const item of Object.keys(need).sort()) {
    const have = w.count(item)
    if (have < need[item]) {
      return failure('craft_grid', args, 'missing_item', `the grid uses ${need[item]} ${item} but ${have} are owned`, { item })
    }
  }
  const before = w.totals()
  let window = w.bot.inventory
  if (station === 'crafting_table') {
    const found = await findStation(w, 'crafting_table', 'craft_grid', args)
    if (found.problem) return found.problem
    window = await openWindow(w, found.block, 'crafting table')
    if (!String(window.type).startsWith('minecraft:crafting')) {
      w.bot.closeWindow(window)
      throw new BridgeError(CODES.UNSUPPORTED, `the crafting table opened a ${window.type} window`)
    }
  }
  let result
  try {
    result = await craftGrid(w.bot, window, grid, size, { clickMs: w.config.limits.click_timeout_ms, settle: (n) => w.ticks(n, 'the crafting grid to settle') })
  } finally {
    // Closing a crafting table gives its grid and the cursor back to the player (server side).
    if (window !== w.bot.inventory) w.bot.closeWindow(window)
  }
  await w.ticks(2, 'the crafted item to settle')
  if (result === null) {
    return failure('craft_grid', args, 'no_result', 'the result slot stayed empty; nothing was crafted')
  }
  const after = w.totals()
  return success('craft_grid', args, `crafted ${result.count} ${result.name}`, {
    produced: gains(before, after),
    consumed: sortedObject(need),
    details: { result: { [result.name]: result.count } }
  })
}

// Shift-click the output into the inventory: one click, so nothing waits on the cursor.
async function takeOutput (w, furnace, ms) {
  await withTimeout(w.bot.clickWindow(2, 0, 1), ms, 'taking the furnace output')
}

// Whether the body burns an owned item: a fuel, and not a tool or facility unless the
// body's fuel order names it (as the embedded body's _fuel_order).
function burnable (w, name) {
  const ticks = w.config.fuel_ticks || {}
  if (!(ticks[name] > 0)) return false
  if ((w.config.fuel_order || []).includes(name)) return true
  return !(w.config.tools || []).includes(name) && !(w.body.facilities || []).includes(name)
}

// The owned fuels smelt may burn, first choice first: other fuels in the body's order
// (fuel_order, then the rest by name), then the input itself, but only its surplus (owned
// units beyond the count being smelted), as the embedded body chooses.
function fuelOrder (w, item, count) {
  const owned = [...new Set(w.slots().map(i => i.name))].filter(n => burnable(w, n)).sort()
  const ranked = []
  for (const n of w.config.fuel_order || []) if (owned.includes(n) && !ranked.includes(n)) ranked.push(n)
  for (const n of owned) if (!ranked.includes(n)) ranked.push(n)
  const others = ranked.filter(n => n !== item)
  if (ranked.includes(item) && w.count(item) > count) others.push(item)
  return others
}

// [fuel, units] to put in, in order: enough for every unit at the station's vanilla pace
// (blast furnaces and smokers burn fuel twice as fast and cook twice as fast: the same
// units per fuel), never more of the input than its surplus.
function fuelPlan (w, item, count, station) {
  const burnDivisor = station === 'furnace' ? 1 : 2
  let ticksNeeded = count * COOK_TICKS[station]
  const plan = []
  for (const fuel of fuelOrder(w, item, count)) {
    if (ticksNeeded <= 0) break
    const burn = w.config.fuel_ticks[fuel] / burnDivisor
    const spare = fuel === item ? w.count(item) - count : w.count(fuel)
    const units = Math.min(Math.ceil(ticksNeeded / burn), spare)
    if (units <= 0) continue
    plan.push([fuel, units])
    ticksNeeded -= units * burn
  }
  return plan
}

async function smelt (w, args) {
  const { input: item, station, count } = args
  if (!w.isItem(item)) return failure('smelt', args, 'invalid_args', `'${item}' is not a known item id`)
  const have = w.count(item)
  if (have < count) return failure('smelt', args, 'missing_item', `smelting ${count} ${item} needs ${count}; ${have} owned`, { item })
  const found = await findStation(w, station, 'smelt', args)
  if (found.problem) return found.problem
  const plan = fuelPlan(w, item, count, station)
  if (!plan.length) {
    let message = `no owned fuel can run the ${station}`
    if (burnable(w, item)) message += `; the ${count} ${item} are all to be smelted, and only ${item} beyond the count smelted is burned`
    return failure('smelt', args, 'no_fuel', message, { fuel_used: {} })
  }
  const before = w.totals()
  let furnace
  try {
    furnace = await withTimeout(w.bot.openFurnace(found.block), w.config.limits.window_timeout_ms, `opening the ${station}`)
  } catch (err) {
    if (err instanceof BridgeError) throw err
    throw new BridgeError(CODES.UNSUPPORTED, `the ${station} opened no furnace window: ${err.message}`)
  }
  const limits = w.config.limits
  let inputAsFuel = 0 // units of the input put in the fuel slot
  let inputFuelBack = 0 // ... and found there unburned at the end
  try {
    const click = limits.click_timeout_ms * 4
    if (furnace.outputItem()) await takeOutput(w, furnace, click)
    const inputType = w.registry.itemsByName[item].id
    await withTimeout(furnace.putInput(inputType, null, count), click, 'putting the input in')
    // The fuel slot holds one kind: the next kind goes in once the slot is empty (the
    // furnace takes a unit in when it lights it, so the last unit is still burning then).
    let next = 0
    const refuel = async () => {
      if (next >= plan.length) return
      const [fuel, units] = plan[next]
      const slot = furnace.fuelItem()
      if (slot && slot.name !== fuel) return
      await withTimeout(furnace.putFuel(w.registry.itemsByName[fuel].id, null, units), click, 'putting fuel in')
      if (fuel === item) inputAsFuel += units
      next += 1
    }
    await refuel()
    const perUnit = COOK_TICKS[station]
    // Wait until the input is used up, or nothing has changed for a while (no recipe / no fuel),
    // counting the server's game ticks: a slow server takes longer, never fewer ticks.
    const deadline = count * perUnit + limits.smelt_slack_ticks
    let idle = 0
    let lastOut = furnace.outputItem() ? furnace.outputItem().count : 0
    let lastIn = furnace.inputItem() ? furnace.inputItem().count : 0
    for (let t = 0; t < deadline;) {
      t += await w.ticks(5, `smelting ${item}`)
      await refuel()
      const out = furnace.outputItem() ? furnace.outputItem().count : 0
      const inp = furnace.inputItem() ? furnace.inputItem().count : 0
      if (inp === 0) break
      if (out === lastOut && inp === lastIn && !(furnace.progress > 0)) idle += 5
      else idle = 0
      if (idle >= limits.smelt_idle_ticks) break
      lastOut = out
      lastIn = inp
    }
    if (furnace.outputItem()) await takeOutput(w, furnace, click)
    if (furnace.inputItem()) await withTimeout(furnace.takeInput(), click, 'taking the unused input back')
    const left = furnace.fuelItem()
    if (left && left.name === item) inputFuelBack = left.count
    if (left) await withTimeout(furnace.takeFuel(), click, 'taking the unused fuel back')
  } finally {
    furnace.close()
  }
  await w.ticks(2, 'the furnace items to settle')
  // On a real server a cooking result with a count comes out as marker items that the
  // server swaps for the result within a tick (datapack/server_form.py): wait for the swap.
  const markers = w.config.markers || []
  await w.until(() => !w.owned().some(i => markers.includes(i.name)), 20)
  const after = w.totals()
  const produced = gains(before, after)
  const consumed = losses(before, after)
  // consumed[item] counts the input smelted and the input burned as fuel: only the first is done.
  const inputBurned = Math.min(Math.max(inputAsFuel - inputFuelBack, 0), consumed[item] || 0)
  const done = (consumed[item] || 0) - inputBurned
  const fuelUsed = {}
  for (const [k, v] of Object.entries(consumed)) if (k !== item) fuelUsed[k] = v
  if (inputBurned > 0) fuelUsed[item] = inputBurned
  if (done === 0) {
    if (Object.keys(fuelUsed).length) {
      // The fuel went in and burns, but too little of it for one item (as the embedded body says).
      const burned = Object.keys(fuelUsed).sort().map(f => `${fuelUsed[f]} ${f}`).join(', ')
      return failure('smelt', args, 'no_fuel', `the owned fuel (${burned}, now burning in the ${station}) is too little to smelt one ${item}; no ${item} was used, more fuel is needed`, { fuel_used: sortedObject(fuelUsed) })
    }
    return failure('smelt', args, 'no_result', `the ${station} did nothing with ${item}; it was returned`)
  }
  const outputs = Object.entries(produced).map(([k, v]) => `${v} ${k}`).join(', ') || 'nothing'
  let message = `${station} turned ${done} ${item} into ${outputs}`
  if (done < count) message += `; fuel ran out after ${done}`
  return success('smelt', args, message, {
    produced,
    consumed: sortedObject(consumed),
    details: { processed: done, fuel: sortedObject(fuelUsed) }
  })
}

function enchantable (w, item) {
  if (item === 'book') return true
  const info = w.registry.itemsByName[item]
  return Boolean(info && ((info.enchantCategories && info.enchantCategories.length) || info.maxDurability))
}

async function enchant (w, args) {
  const { item, option } = args
  const cost = OPTION_COST[option]
  if (!w.isItem(item)) return failure('enchant', args, 'invalid_args', `'${item}' is not a known item id`)
  const plain = w.findItem(item, { plain: true })
  if (!plain) {
    const owned = w.count(item) > 0
    return failure('enchant', args, owned ? 'not_enchantable' : 'missing_item', owned ? `${item} is already enchanted` : `no ${item} in the inventory`)
  }
  if (!enchantable(w, item)) return failure('enchant', args, 'not_enchantable', `${item} cannot be enchanted`)
  const lapis = w.count('lapis_lazuli')
  if (lapis < cost) {
    return failure('enchant', args, 'missing_item', `option ${option} needs ${cost} lapis_lazuli; ${lapis} owned`, { item: 'lapis_lazuli' })
  }
  const found = await findStation(w, 'enchanting_table', 'enchant', args)
  if (found.problem) return found.problem
  let table
  try {
    table = await withTimeout(w.bot.openEnchantmentTable(found.block), w.config.limits.window_timeout_ms, 'opening the enchanting table')
  } catch (err) {
    if (err instanceof BridgeError) throw err
    throw new BridgeError(CODES.UNSUPPORTED, `the enchanting table opened no window: ${err.message}`)
  }
  let enchanted = null
  let problem = null
  const click = w.config.limits.click_timeout_ms * 4
  try {
    const ready = new Promise(resolve => table.once('ready', resolve))
    await withTimeout(table.putTargetItem(w.findItem(item, { plain: true })), click, 'putting the item on the table')
    await withTimeout(ready, w.config.limits.window_timeout_ms, 'waiting for enchantment offers').catch(() => null)
    const offer = table.enchantments[cost - 1]
    const required = offer ? offer.level : 0
    if (!offer || required <= 0) {
      problem = failure('enchant', args, 'no_result', `the table offers no ${option} option for ${item} right now`, { offered: table.enchantments.map(e => e.level) })
    } else if (w.bot.experience.level < required) {
      problem = failure('enchant', args, 'not_enough_levels', `option ${option} needs level ${required}; level is ${w.bot.experience.level}`)
    } else {
      await withTimeout(table.putLapis(w.findItem('lapis_lazuli')), click, 'putting lapis on the table')
      enchanted = await withTimeout(table.enchant(cost - 1), click, 'enchanting')
    }
    if (table.targetItem()) await withTimeout(table.takeTargetItem(), click, 'taking the item back')
    const lapisLeft = table.slots[1]
    if (lapisLeft) await withTimeout(w.bot.putAway(1), click, 'taking the lapis back')
  } finally {
    table.close()
  }
  if (problem) return problem
  await w.ticks(2, 'the enchanted item to settle')
  const enchantments = (enchanted && enchanted.enchants ? enchanted.enchants : []).map(e => [String(e.name).replace(/^minecraft:/, ''), e.lvl])
  if (!enchantments.length) return failure('enchant', args, 'no_result', `the table offered nothing for ${item}`)
  const resultItem = item === 'book' ? 'enchanted_book' : item
  return success('enchant', args, `enchanted ${item}: ${enchantments.map(([n, l]) => `${n} ${l}`).join(', ')}`, {
    produced: { [resultItem]: 1 },
    consumed: { [item]: 1, lapis_lazuli: cost },
    details: { enchantments, levels_spent: cost }
  })
}

module.exports = { craft_grid: craftGridSkill, smelt, enchant, findStation, fuelOrder }
