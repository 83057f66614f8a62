'use strict'
// Fast block search over the loaded chunks: sections are visited nearest first, skipped when
// their palette holds none of the wanted states or when they cannot hold anything closer than
// what was already found. Block states are compared as numbers; no Block objects are built.

const { Vec3 } = require('vec3')

function stateNames (registry, names) {
  const out = new Map()
  for (const name of names) {
    const block = registry.blocksByName[name]
    if (!block) continue
    for (let s = block.minStateId; s <= block.maxStateId; s++) out.set(s, name)
  }
  return out
}

function* sectionsByDistance (bot, point, radius, horizontal) {
  const minY = bot.game.minY || 0
  const height = bot.game.height || 256
  const r2 = radius * radius
  const found = []
  const syLo = Math.max(Math.floor((horizontal ? minY : point.y - radius) / 16), Math.floor(minY / 16))
  const syHi = Math.min(Math.floor((horizontal ? minY + height - 1 : point.y + radius) / 16), Math.floor((minY + height - 1) / 16))
  for (let cx = Math.floor((point.x - radius) / 16); cx <= Math.floor((point.x + radius) / 16); cx++) {
    for (let cz = Math.floor((point.z - radius) / 16); cz <= Math.floor((point.z + radius) / 16); cz++) {
      for (let sy = syLo; sy <= syHi; sy++) {
        const dx = Math.max(cx * 16 - point.x, 0, point.x - (cx * 16 + 15))
        const dz = Math.max(cz * 16 - point.z, 0, point.z - (cz * 16 + 15))
        const dy = horizontal ? 0 : Math.max(sy * 16 - point.y, 0, point.y - (sy * 16 + 15))
        const d2 = dx * dx + dy * dy + dz * dz
        if (d2 <= r2) found.push({ cx, sy, cz, d2 })
      }
    }
  }
  found.sort((a, b) => a.d2 - b.d2)
  yield * found
}

function sectionOf (bot, sec) {
  const column = bot.world.getColumn(sec.cx, sec.cz)
  if (!column) return null
  const index = sec.sy - Math.floor((bot.game.minY || 0) / 16)
  const section = column.sections && column.sections[index]
  return section ? { column, section } : null
}

function paletteNames (section, states) {
  if (!section.palette) return null // a global palette: anything may be there
  const names = new Set()
  for (const id of section.palette) {
    const name = states.get(id)
    if (name) names.add(name)
  }
  return names
}

// Visit the wanted blocks of one section: visit(name, x, y, z, d2).
function scanSection (bot, found, sec, states, wanted, point, horizontal, visit) {
  const local = new Vec3(0, 0, 0)
  const baseX = sec.cx * 16; const baseY = sec.sy * 16; const baseZ = sec.cz * 16
  for (let y = 0; y < 16; y++) {
    local.y = baseY + y
    const dy = horizontal ? 0 : local.y - point.y
    for (let x = 0; x < 16; x++) {
      local.x = x
      const dx = baseX + x - point.x
      for (let z = 0; z < 16; z++) {
        local.z = z
        const name = states.get(found.column.getBlockStateId(local))
        if (name === undefined || !wanted.has(name)) continue
        const dz = baseZ + z - point.z
        visit(name, baseX + x, local.y, baseZ + z, dx * dx + dy * dy + dz * dz)
      }
    }
  }
}

// The nearest squared distance of each wanted block within the radius: {name: d2}.
function nearestPerName (bot, names, point, radius) {
  const states = stateNames(bot.registry, names)
  const best = {}
  const r2 = radius * radius
  for (const sec of sectionsByDistance(bot, point, radius, false)) {
    const found = sectionOf(bot, sec)
    if (!found) continue
    const present = paletteNames(found.section, states) || new Set(states.values())
    const wanted = new Set([...present].filter(n => best[n] === undefined || best[n] > sec.d2))
    if (!wanted.size) continue
    scanSection(bot, found, sec, states, wanted, point, false, (name, x, y, z, d2) => {
      if (d2 <= r2 && (best[name] === undefined || d2 < best[name])) best[name] = d2
    })
  }
  return best
}

// The k nearest wanted blocks within the radius: [{pos, name, d2}], nearest first (ties by x, y, z).
function nearestPositions (bot, names, point, radius, k, horizontal = false) {
  const states = stateNames(bot.registry, names)
  const everything = new Set(states.values())
  const r2 = radius * radius
  let hits = []
  for (const sec of sectionsByDistance(bot, point, radius, horizontal)) {
    if (hits.length >= k && sec.d2 > hits[k - 1].d2) break
    const found = sectionOf(bot, sec)
    if (!found) continue
    const present = paletteNames(found.section, states) || everything
    if (!present.size) continue
    scanSection(bot, found, sec, states, present, point, horizontal, (name, x, y, z, d2) => {
      if (d2 <= r2) hits.push({ pos: new Vec3(x, y, z), name, d2 })
    })
    hits.sort((a, b) => a.d2 - b.d2 || a.pos.x - b.pos.x || a.pos.y - b.pos.y || a.pos.z - b.pos.z)
    if (hits.length > k) hits = hits.slice(0, k)
  }
  return hits
}

module.exports = { nearestPerName, nearestPositions }
