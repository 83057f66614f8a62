'use strict'
// Harvest predictions follow the tags Python sends (the active rules), not minecraft-data.
const test = require('node:test')
const assert = require('node:assert')
const { Harvest } = require('../src/harvest')

const TOOLS = {
  wooden_pickaxe: { kind: 'pickaxe', tier_level: 0, speed: 2 },
  stone_pickaxe: { kind: 'pickaxe', tier_level: 1, speed: 4 },
  iron_pickaxe: { kind: 'pickaxe', tier_level: 2, speed: 6 },
  diamond_pickaxe: { kind: 'pickaxe', tier_level: 3, speed: 8 },
  stone_axe: { kind: 'axe', tier_level: 1, speed: 4 }
}

function vanillaLike () {
  return {
    requires_tool: ['stone', 'iron_ore', 'obsidian'],
    tags: {
      'mineable/pickaxe': ['stone', 'iron_ore', 'obsidian'],
      'mineable/axe': ['oak_log'],
      needs_stone_tool: ['iron_ore'],
      needs_iron_tool: [],
      needs_diamond_tool: ['obsidian']
    },
    tools: TOOLS
  }
}

test('the vanilla tags give vanilla harvesting', () => {
  const h = new Harvest(vanillaLike())
  assert.strictEqual(h.canHarvest('stone', 'wooden_pickaxe'), true)
  assert.strictEqual(h.canHarvest('stone', null), false)
  assert.strictEqual(h.canHarvest('oak_log', null), true)
  assert.strictEqual(h.canHarvest('iron_ore', 'wooden_pickaxe'), false)
  assert.strictEqual(h.canHarvest('iron_ore', 'stone_pickaxe'), true)
  assert.strictEqual(h.canHarvest('obsidian', 'iron_pickaxe'), false)
  assert.strictEqual(h.digTicks('stone', 1.5, 'wooden_pickaxe'), 23) // 1.5 s by hand is 150 ticks
  assert.strictEqual(h.digTicks('stone', 1.5, null), 150)
  assert.strictEqual(h.digTicks('oak_log', 2, 'stone_axe'), 15)
  assert.strictEqual(h.digTicks('bedrock', -1, 'diamond_pickaxe'), Infinity)
})

test('a suite that edits the harvest tags changes the predictions the same way', () => {
  const spec = vanillaLike()
  spec.tags.needs_stone_tool = []
  spec.tags.needs_diamond_tool = ['obsidian', 'iron_ore'] // iron now needs a diamond pickaxe
  spec.tags['mineable/pickaxe'] = ['iron_ore', 'obsidian'] // and stone is no longer a pickaxe block
  spec.tags['mineable/axe'] = ['oak_log', 'stone'] // but an axe one
  const h = new Harvest(spec)
  assert.strictEqual(h.canHarvest('iron_ore', 'stone_pickaxe'), false)
  assert.strictEqual(h.canHarvest('iron_ore', 'iron_pickaxe'), false)
  assert.strictEqual(h.canHarvest('iron_ore', 'diamond_pickaxe'), true)
  assert.strictEqual(h.canHarvestWithAny('iron_ore', new Set(['iron_pickaxe', 'stone_axe'])), false)
  assert.strictEqual(h.canHarvest('stone', 'wooden_pickaxe'), false)
  assert.strictEqual(h.canHarvest('stone', 'stone_axe'), true)
  // A pickaxe no longer speeds stone up: hand speed, and the slower no-harvest divisor.
  assert.strictEqual(h.digTicks('stone', 1.5, 'wooden_pickaxe'), 150)
  assert.strictEqual(h.digTicks('stone', 1.5, 'stone_axe'), 12)
  assert.strictEqual(h.bestTool('stone', ['wooden_pickaxe', 'stone_axe']), 'stone_axe')
})

test('the best tool is chosen as the embedded body chooses it', () => {
  const h = new Harvest(vanillaLike())
  assert.strictEqual(h.bestTool('iron_ore', ['wooden_pickaxe', 'stone_pickaxe', 'iron_pickaxe']), 'iron_pickaxe')
  assert.strictEqual(h.bestTool('iron_ore', ['wooden_pickaxe']), 'wooden_pickaxe') // mines it, harvests nothing
  assert.strictEqual(h.bestTool('oak_log', ['wooden_pickaxe']), null)
  assert.strictEqual(h.digTicks('stone', 1.5, 'iron_pickaxe', { efficiency: 2, haste: 2 }), 3)
  assert.strictEqual(h.digTicks('stone', 1.5, 'iron_pickaxe', { onGround: false }), 38)
})
