'use strict'
// The stdio protocol and argument checks: bad input gets structured errors, never a crash.
const test = require('node:test')
const assert = require('node:assert')
const { spawnSync } = require('node:child_process')
const path = require('node:path')
const { parseLine } = require('../src/protocol')
const { parseAction } = require('../src/args')

const SPECS = {
  mine: { args: [{ name: 'block', type: 'id', required: true }, { name: 'count', type: 'int', required: false, default: 1, min: 1, max: 4 }] },
  craft_grid: { args: [{ name: 'station', type: 'enum', required: true, choices: ['inventory', 'crafting_table'] }, { name: 'grid', type: 'grid', required: true }, { name: 'count', type: 'int', required: false, default: 1, min: 1, max: 1 }] }
}

test('lines are parsed into requests or structured errors', () => {
  assert.strictEqual(parseLine('{').error.code, 'bad_json')
  assert.strictEqual(parseLine('[]').error.code, 'bad_request')
  assert.strictEqual(parseLine('{"id": 1.5, "method": "x"}').error.code, 'bad_request')
  assert.strictEqual(parseLine('{"id": 3}').id, 3)
  assert.strictEqual(parseLine('{"id": 3, "method": "x", "params": [1]}').error.code, 'invalid_params')
  assert.deepStrictEqual(parseLine('{"id": 4, "method": "ping"}').request, { id: 4, method: 'ping', params: {} })
})

test('skill arguments follow the same rules as the embedded body', () => {
  assert.deepStrictEqual(parseAction(SPECS, 'mine', { block: 'minecraft:Oak_Log' }).args, { block: 'oak_log', count: 1 })
  assert.match(parseAction(SPECS, 'mine', { block: 'stone', count: 9 }).error, /between 1 and 4, got 9/)
  assert.match(parseAction(SPECS, 'mine', { block: 'stone', count: true }).error, /must be an integer/)
  assert.match(parseAction(SPECS, 'mine', { blok: 'stone' }).error, /has no argument 'blok'/)
  assert.match(parseAction(SPECS, 'fly', {}).error, /unknown skill/)
  assert.match(parseAction(SPECS, 'craft_grid', { station: 'inventory', grid: ['a', 'b'] }).error, /nested row arrays/)
  assert.deepStrictEqual(parseAction(SPECS, 'craft_grid', { station: 'inventory', grid: [['oak_log', null]] }).args.grid, [['oak_log', null]])
})

test('the bridge process answers garbage with errors and keeps serving', () => {
  const lines = ['garbage', '{"id": 1, "method": "hello", "params": {"protocol": 1}}', '{"id": 2, "method": "nope"}', '"just a string"', '{"id": 3, "method": "ping"}']
  const out = spawnSync(process.execPath, [path.join(__dirname, '..', 'src', 'main.js')], { input: lines.join('\n') + '\n', encoding: 'utf8', timeout: 20000 })
  const msgs = out.stdout.trim().split('\n').map(l => JSON.parse(l))
  assert.strictEqual(msgs[0].event, 'ready')
  const byId = Object.fromEntries(msgs.filter(m => m.id !== undefined && m.id !== null).map(m => [m.id, m]))
  assert.strictEqual(byId[1].ok, true)
  assert.strictEqual(byId[2].error.code, 'unknown_method')
  assert.strictEqual(byId[3].result.pong, true)
  assert.strictEqual(msgs.filter(m => m.id === null).length, 2)
  assert.strictEqual(out.status, 0)
})
