'use strict'
// mine, prepare_access, explore, collect, ascend and wait: reaching blocks and drops in the
// real world, with the embedded body's arguments, failure reasons and result fields.

const { failure, success, gains, sortedObject, withCeiling, goals, Vec3 } = require('../world')
const { BridgeError } = require('../protocol')

function unknownBlock (w, skill, args, name) {
  if (w.isItem(name)) return failure(skill, args, 'invalid_args', `'${name}' is an item, not a block id`)
  return failure(skill, args, 'invalid_args', `'${name}' is not a known block id`)
}

function blocked (skill, args, target, move) {
  if (move.why === 'too_many_digs') {
    return failure(skill, args, 'target_unreachable', `the way to ${target} is too long to dig in one call`)
  }
  if (move.why === 'out_of_time') {
    return failure(skill, args, 'target_unreachable', `ran out of time reaching ${target} within this call`)
  }
  return failure(skill, args, 'target_unreachable', `the way to the nearest ${target} is blocked or has no path (${move.why})`)
}

function unconfirmed (args, name, dig) {
  const what = dig.why === 'refused'
    ? `the server kept the ${name} (it sent the block back)`
    : dig.why === 'no_answer'
      ? `the server did not confirm breaking the ${name} in time`
      : `digging the ${name} failed (${dig.message || dig.why})`
  return failure('mine', args, 'no_effect', `mined nothing: ${what}`, { block: name })
}

async function mine (w, args) {
  const { block: target, count } = args
  const names = w.blockNames(target)
  if (names === null) return unknownBlock(w, 'mine', args, target)
  const radius = w.body.mine_radius
  const mined = []
  let targetDrops = {}
  let pathDrops = {}
  let problem = null
  let serverSaidNo = false
  for (let i = 0; i < count && !serverSaidNo; i++) {
    const hits = w.nearestBlocks(names, radius, 8)
    if (!hits.length) {
      problem = failure('mine', args, 'no_target_nearby', `no ${target} within ${radius} blocks`)
      break
    }
    let chosen = null
    for (const hit of hits) {
      if (!w.canHarvest(hit.name)) {
        problem = problem || failure('mine', args, 'needs_tool', `no owned tool can harvest ${hit.name}`, { block: hit.name })
        continue
      }
      if (w.timeLeft() <= 0) {
        problem = failure('mine', args, 'target_unreachable', `ran out of time reaching a ${target} within this call`)
        break
      }
      const before = w.totals()
      const move = await w.goto(w.reachGoal(hit.pos))
      pathDrops = addInto(pathDrops, gains(before, w.totals()))
      if (!move.ok) {
        if (problem === null || problem.reason === 'needs_tool' || move.why === 'out_of_time') problem = blocked('mine', args, hit.name, move)
        if (move.why === 'out_of_time') break
        continue
      }
      const block = w.bot.blockAt(hit.pos)
      if (!block || block.name !== hit.name) continue // it changed while we walked
      chosen = block
      break
    }
    if (!chosen) break
    problem = null
    const before = w.totals()
    await w.equipBestTool(chosen)
    const dig = await w.digConfirmed(chosen)
    if (!dig.ok) {
      problem = unconfirmed(args, chosen.name, dig)
      serverSaidNo = true
      break
    }
    await w.collectDrops(chosen.position.offset(0.5, 0.5, 0.5), 1.5, dig.since)
    targetDrops = addInto(targetDrops, gains(before, w.totals()))
    mined.push(chosen.name)
  }
  if (!mined.length) return problem || failure('mine', args, 'no_target_nearby', `no ${target} within ${radius} blocks`)
  let message = `mined ${mined.length} of ${count} ${target}`
  if (problem) message += `; stopped: ${problem.message}`
  return success('mine', args, message, {
    produced: addInto({ ...targetDrops }, pathDrops),
    details: { blocks: mined, drops: sortedObject(targetDrops), path_drops: sortedObject(pathDrops), requested: count }
  })
}

function addInto (a, b) {
  for (const [k, v] of Object.entries(b)) a[k] = (a[k] || 0) + v
  return a
}

async function prepareAccess (w, args) {
  const target = args.target
  const names = w.blockNames(target)
  if (names === null) return unknownBlock(w, 'prepare_access', args, target)
  const radius = w.body.mine_radius
  const hits = w.nearestBlocks(names, radius, 4)
  if (!hits.length) return failure('prepare_access', args, 'no_target_nearby', `no ${target} within ${radius} blocks`)
  let firstBlocked = null
  for (const hit of hits) {
    const goal = w.reachGoal(hit.pos)
    if (goal.isEnd(w.feet())) {
      return success('prepare_access', args, `${target} is already within reach`, { details: { distance: round1(Math.sqrt(hit.d2)) } })
    }
    const before = w.totals()
    const move = await w.goto(goal)
    if (!move.ok) { firstBlocked = firstBlocked || move; continue }
    return success('prepare_access', args, `cleared ${move.digs} blocks and moved next to ${target}`, {
      produced: gains(before, w.totals()),
      details: { cleared: move.digs }
    })
  }
  return blocked('prepare_access', args, target, firstBlocked)
}

function round1 (x) { return Math.round(x * 10) / 10 }

function regionOf (w, pos) {
  const size = w.body.region_size
  return [Math.floor(pos.x / size), Math.floor(pos.z / size)]
}

function nextRegion (w, visited) {
  const size = w.body.region_size
  const b = w.config.world_bounds
  const here = regionOf(w, w.feet())
  const todo = []
  for (let rx = Math.floor(b.min_x / size); rx <= Math.floor(b.max_x / size); rx++) {
    for (let rz = Math.floor(b.min_z / size); rz <= Math.floor(b.max_z / size); rz++) {
      if (!visited.has(`${rx},${rz}`)) todo.push([rx, rz])
    }
  }
  if (!todo.length) return null
  todo.sort((a, c) => ((a[0] - here[0]) ** 2 + (a[1] - here[1]) ** 2) - ((c[0] - here[0]) ** 2 + (c[1] - here[1]) ** 2) || a[0] - c[0] || a[1] - c[1])
  return todo[0]
}

function findTarget (w, target, names) {
  const radius = w.body.explore_radius
  if (names !== null) {
    const hits = w.nearestBlocks(names, radius, 1, { horizontal: true })
    return hits.length ? { pos: hits[0].pos, distance: Math.sqrt(hits[0].d2), block: true } : null
  }
  const mobs = w.livingEntities().filter(e => e.name === target).map(e => ({ e, d2: w.dist2(e.position) }))
    .filter(m => m.d2 <= radius * radius).sort((a, b) => a.d2 - b.d2 || a.e.id - b.e.id)
  return mobs.length ? { pos: mobs[0].e.position.floored(), distance: Math.sqrt(mobs[0].d2), block: false } : null
}

async function explore (w, args, session) {
  const target = args.target
  const names = w.blockNames(target)
  if (names === null && !w.isEntity(target)) {
    return failure('explore', args, 'not_searchable', `explore looks for a block or living-entity id; '${target}' is neither`)
  }
  const visited = session.visitedRegions
  const mark = () => { const r = regionOf(w, w.feet()); visited.add(`${r[0]},${r[1]}`) }
  mark()
  const start = w.feet()
  const before = w.totals()
  let hops = 0
  let found = findTarget(w, target, names)
  if (!found && nextRegion(w, visited) === null) {
    // Every region has been visited: start a new sweep from here (as the embedded body does).
    visited.clear()
    mark()
  }
  while (!found && hops < w.body.explore_hops) {
    const region = nextRegion(w, visited)
    if (!region) break
    const size = w.body.region_size
    const cx = region[0] * size + Math.floor(size / 2)
    const cz = region[1] * size + Math.floor(size / 2)
    await w.goto(new goals.GoalXZ(cx, cz), { timeoutMs: w.config.limits.explore_hop_timeout_ms })
    visited.add(`${region[0]},${region[1]}`)
    mark()
    hops += 1
    found = findTarget(w, target, names)
  }
  if (!found) {
    const moved = w.feet().equals(start) ? '' : ' after moving to new regions'
    const left = nextRegion(w, visited) === null
    const note = left ? '; every region has now been visited' : ''
    return failure('explore', args, 'not_found', `no ${target} found${moved}${note}`, {
      regions_visited: hops, all_regions_visited: left
    })
  }
  const goal = found.block ? w.reachGoal(found.pos) : new goals.GoalNear(found.pos.x, found.pos.y, found.pos.z, 2)
  const move = await w.goto(goal)
  if (!move.ok) return blocked('explore', args, target, move)
  return success('explore', args, `found ${target} ${Math.round(found.distance)} blocks away and moved close`, {
    produced: gains(before, w.totals()),
    details: { found: true, distance: round1(found.distance), regions_visited: hops }
  })
}

async function collect (w, args) {
  const item = args.item
  if (!w.isItem(item)) return failure('collect', args, 'invalid_args', `'${item}' is not a known item id`)
  const r2 = w.body.drop_radius ** 2
  const near = w.itemEntities()
    .map(e => ({ e, d: w.droppedItem(e), d2: w.dist2(e.position) }))
    .filter(x => x.d && x.d.name === item && x.d2 <= r2)
    .sort((a, b) => a.d2 - b.d2 || a.e.id - b.e.id)
  if (!near.length) return failure('collect', args, 'no_target_nearby', `no dropped ${item} within ${w.body.drop_radius} blocks`)
  const { e } = near[0]
  if (!w.hasRoomFor(item)) return failure('collect', args, 'pickup_failed', 'the inventory is full')
  if (w.ledger) w.ledger.allow(e.id)
  const before = w.totals()
  const target = e.position.floored()
  const move = await w.goto(new goals.GoalBlock(target.x, target.y, target.z), { timeoutMs: w.config.limits.pickup_timeout_ms * 4 })
  const gone = await w.waitGone(e, w.config.limits.pickup_ticks)
  const got = gains(before, w.totals())
  if (!got[item]) {
    if (!move.ok) return blocked('collect', args, `dropped ${item}`, move)
    return failure('collect', args, 'pickup_failed', gone ? `the dropped ${item} vanished before it was picked up` : `could not pick up the dropped ${item}`)
  }
  return success('collect', args, `picked up ${got[item]} ${item}`, { produced: got })
}

function surfaceY (w) {
  const feet = w.feet()
  const top = (w.bot.game.minY || 0) + (w.bot.game.height || 256) - 1
  let surface = null
  for (let y = feet.y + 2; y <= top; y++) {
    const b = w.bot.blockAt(new Vec3(feet.x, y, feet.z))
    if (b === null) break
    if (b.boundingBox === 'block') surface = y
  }
  return surface
}

async function ascend (w, args) {
  const height = args.height
  const feet = w.feet()
  const before = w.totals()
  if (height === 0) {
    const surface = surfaceY(w)
    if (surface === null) return failure('ascend', args, 'no_effect', 'already standing at the surface')
    const move = await w.goto(new goals.GoalY(surface + 1))
    if (!move.ok) return blocked('ascend', args, 'the surface', move)
    const climbed = w.feet().y - feet.y
    return success('ascend', args, `climbed ${climbed} blocks up to the surface`, { produced: gains(before, w.totals()), details: { climbed } })
  }
  const disposable = w.body.disposable_blocks || []
  const available = disposable.reduce((n, name) => n + w.count(name), 0)
  if (available < height) {
    return failure('ascend', args, 'missing_item', `pillaring ${height} blocks needs ${height} disposable blocks; ${available} owned`)
  }
  for (let i = 0; i < height; i++) {
    const cell = w.bot.blockAt(feet.offset(0, 2 + i, 0))
    if (cell && cell.boundingBox === 'block' && !w.canClear(cell)) {
      return failure('ascend', args, 'no_spot', `${cell.name} above cannot be cleared with owned tools`)
    }
  }
  const consumed = {}
  for (let i = 0; i < height; i++) {
    const above = w.bot.blockAt(w.feet().offset(0, 2, 0))
    if (above && above.boundingBox === 'block') {
      await w.equipBestTool(above)
      const dig = await w.digConfirmed(above)
      if (!dig.ok) break
    }
    const name = disposable.find(n => w.count(n) > 0)
    await withCeiling(w.bot.equip(w.findItem(name), 'hand'), w.config.limits.click_timeout_ms, `holding ${name}`)
    const placed = await pillarStep(w)
    await w.ticks(6, 'landing on the placed block')
    if (!placed) break
    consumed[name] = (consumed[name] || 0) + 1
  }
  const climbed = w.feet().y - feet.y
  if (climbed <= 0) return failure('ascend', args, 'no_spot', 'could not place a block underfoot')
  return success('ascend', args, `pillared up ${climbed} blocks`, { produced: gains(before, w.totals()), consumed, details: { climbed } })
}

async function pillarStep (w) {
  const bot = w.bot
  const startY = bot.entity.position.y
  const below = bot.blockAt(w.feet().offset(0, -1, 0))
  if (!below || below.boundingBox !== 'block') return false
  await bot.look(bot.entity.yaw, -Math.PI / 2, true)
  bot.setControlState('jump', true)
  try {
    await w.until(() => bot.entity.position.y >= startY + 1, 20, [[bot, 'move']])
    await withCeiling(bot.placeBlock(below, new Vec3(0, 1, 0)), w.config.limits.click_timeout_ms, 'placing a block underfoot')
    return true
  } catch (err) {
    w.checkCancelled()
    if (err instanceof BridgeError) throw err // a lagging server, not a refused placement
    return false
  } finally {
    bot.setControlState('jump', false)
  }
}

async function wait (w, args) {
  await w.ticks(args.ticks, `waiting ${args.ticks} ticks`)
  return success('wait', args, `waited ${args.ticks} ticks`, { details: { ticks: args.ticks } })
}

module.exports = { mine, prepare_access: prepareAccess, explore, collect, ascend, wait, blocked }
