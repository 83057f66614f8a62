'use strict'
// Which owned tool harvests a block, and how long digging takes, from the active rule set's
// block tags (mineable/*, needs_*_tool), sent by Python in "configure". minecraft-data's vanilla
// tool tiers are never consulted: a rule suite that edits those tags changes what the server
// does, and this follows it. Block hardness, whether a block needs a tool at all and tool speeds
// are game facts (the game hard-codes them; a datapack cannot change them).

const TOOL_KINDS = ['pickaxe', 'axe', 'shovel', 'hoe']
const NEEDS = [['needs_diamond_tool', 3], ['needs_iron_tool', 2], ['needs_stone_tool', 1]]

class Harvest {
  // spec: {requires_tool: [block], tags: {"mineable/pickaxe": [block], "needs_iron_tool": [...]},
  //        tools: {item: {kind, tier_level, speed, correct_for: [block]}}}
  constructor (spec) {
    const s = spec || {}
    this.requiresTool = new Set(s.requires_tool || [])
    this.tags = {}
    for (const [tag, blocks] of Object.entries(s.tags || {})) this.tags[tag] = new Set(blocks)
    this.tools = s.tools || {}
  }

  inTag (tag, block) {
    const set = this.tags[tag]
    return Boolean(set && set.has(block))
  }

  isTool (item) { return Boolean(item && this.tools[item]) }

  // The game hard-codes a few blocks a tool is always right for (a sword or shears on cobweb).
  correctFor (block, tool) {
    const info = tool ? this.tools[tool] : null
    return Boolean(info && info.correct_for && info.correct_for.includes(block))
  }

  // The tool speeds up digging this block (the tool's mineable tag holds it, or the game says so).
  speedsUp (block, tool) {
    const info = tool ? this.tools[tool] : null
    if (!info) return false
    if (this.correctFor(block, tool)) return true
    return TOOL_KINDS.includes(info.kind) && this.inTag(`mineable/${info.kind}`, block)
  }

  // Breaking the block with this tool (null: bare hand) drops its loot.
  canHarvest (block, tool) {
    if (!this.requiresTool.has(block)) return true
    const info = tool ? this.tools[tool] : null
    if (!info) return false
    if (this.correctFor(block, tool)) return true
    for (const [tag, level] of NEEDS) {
      if (info.tier_level < level && this.inTag(tag, block)) return false
    }
    return this.speedsUp(block, tool)
  }

  // Some owned item (or the bare hand) harvests the block.
  canHarvestWithAny (block, owned) {
    if (!this.requiresTool.has(block)) return true
    return [...owned].some(item => this.canHarvest(block, item))
  }

  // The owned tool the embedded body would use: one whose kind mines the block, a harvesting one
  // first, then the highest tier, then the fastest, then by name.
  bestTool (block, owned) {
    const candidates = [...new Set(owned)].filter(t => this.speedsUp(block, t))
    const harvesting = candidates.filter(t => this.canHarvest(block, t))
    const pool = harvesting.length ? harvesting : candidates
    if (!pool.length) return null
    const key = t => [this.tools[t].tier_level, this.tools[t].speed]
    return pool.sort((a, b) => {
      const ka = key(a); const kb = key(b)
      return (kb[0] - ka[0]) || (kb[1] - ka[1]) || (a < b ? 1 : a > b ? -1 : 0)
    })[0]
  }

  // Game ticks to break a block (vanilla's formula; Infinity when it cannot be broken).
  digTicks (block, hardness, tool, { efficiency = 0, haste = 0, fatigue = 0, inWater = false, aquaAffinity = false, onGround = true } = {}) {
    if (hardness === null || hardness === undefined || hardness < 0) return Infinity
    let speed = 1
    if (this.speedsUp(block, tool)) speed = this.tools[tool].speed
    if (efficiency > 0 && speed > 1) speed += efficiency * efficiency + 1
    if (haste > 0) speed *= 1 + 0.2 * haste
    if (fatigue > 0) speed *= [1, 0.3, 0.09, 0.0027, 0.00081][Math.min(fatigue, 4)]
    if (inWater && !aquaAffinity) speed /= 5
    if (!onGround) speed /= 5
    if (hardness === 0) return 0
    const delta = speed / hardness / (this.canHarvest(block, tool) ? 30 : 100)
    if (delta >= 1) return 0
    if (delta <= 0) return Infinity
    return Math.ceil(1 / delta)
  }
}

module.exports = { Harvest, TOOL_KINDS }
