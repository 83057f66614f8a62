'use strict'
// Validate a skill call against the skill definitions Python sends in "configure"
// (mirrorcraft/data/skills.yaml): the same argument names, types, bounds and defaults as
// the embedded body. Returns {args} or {error: message}; never throws.

const MAX_STRING = 64
const ID_RE = /^(?:[a-z0-9_.-]+:)?[a-z0-9_./-]+$/

function short (value) {
  let text
  try { text = JSON.stringify(value) } catch (e) { text = String(value) }
  if (text === undefined) text = String(value)
  return text.length <= 40 ? text : text.slice(0, 37) + '...'
}

function normalizeId (raw) {
  const text = raw.trim().toLowerCase()
  if (!text || text.length > 128 || !ID_RE.test(text)) return null
  return text.startsWith('minecraft:') ? text.slice('minecraft:'.length) : text
}

function parseGrid (value) {
  if (!Array.isArray(value) || value.length === 0) return { error: 'grid must be a non-empty list of rows' }
  if (!value.every(Array.isArray)) {
    return { error: 'grid must be nested row arrays, e.g. [["a", null], [null, null]]; a flat list is invalid' }
  }
  if (value.length > 3 || value.some(row => row.length > 3 || row.length === 0)) {
    return { error: 'grid rows: at most 3 rows of 1 to 3 cells' }
  }
  if (new Set(value.map(row => row.length)).size !== 1) return { error: 'grid rows must all have the same length' }
  const rows = []
  for (const row of value) {
    const cells = []
    for (const cell of row) {
      if (cell === null) { cells.push(null); continue }
      if (typeof cell !== 'string' || cell.length > MAX_STRING) return { error: `grid cells must be item ids or null, got ${short(cell)}` }
      const id = normalizeId(cell)
      if (id === null) return { error: `grid cell is not a valid item id: ${short(cell)}` }
      cells.push(id)
    }
    rows.push(cells)
  }
  return { value: rows }
}

function parseArg (spec, value) {
  if (spec.type === 'id') {
    if (typeof value !== 'string') return { error: `${spec.name} must be a string id, got ${short(value)}` }
    if (value.length > MAX_STRING) return { error: `${spec.name} is longer than ${MAX_STRING} characters` }
    const id = normalizeId(value)
    if (id === null) return { error: `${spec.name} is not a valid id: ${short(value)}` }
    return { value: id }
  }
  if (spec.type === 'int') {
    if (typeof value !== 'number' || !Number.isFinite(value) || !Number.isInteger(value)) {
      return { error: `${spec.name} must be an integer, got ${short(value)}` }
    }
    if ((spec.min !== null && spec.min !== undefined && value < spec.min) || (spec.max !== null && spec.max !== undefined && value > spec.max)) {
      return { error: `${spec.name} must be between ${spec.min} and ${spec.max}, got ${value}` }
    }
    return { value }
  }
  if (spec.type === 'enum') {
    if (typeof value !== 'string' || !spec.choices.includes(value)) {
      return { error: `${spec.name} must be one of ${spec.choices.join(', ')}, got ${short(value)}` }
    }
    return { value }
  }
  if (spec.type === 'grid') return parseGrid(value)
  return { error: `unsupported argument type ${spec.type}` }
}

// specs: {skill: {args: [{name, type, required, default, min, max, choices}]}}
function parseAction (specs, skill, args) {
  if (typeof skill !== 'string' || !Object.prototype.hasOwnProperty.call(specs, skill)) {
    return { error: `unknown skill ${short(skill)}; skills: ${Object.keys(specs).join(', ')}` }
  }
  if (args === undefined || args === null) args = {}
  if (typeof args !== 'object' || Array.isArray(args)) return { error: 'args must be an object' }
  const spec = specs[skill]
  const known = new Set(spec.args.map(a => a.name))
  const unknown = Object.keys(args).filter(k => !known.has(k))
  if (unknown.length) {
    return { error: `${skill} has no argument '${unknown[0].slice(0, MAX_STRING)}'; it takes ${[...known].sort().join(', ')}` }
  }
  const parsed = {}
  for (const arg of spec.args) {
    const given = args[arg.name]
    if (given === undefined || (given === null && arg.type !== 'grid')) {
      if (arg.required) return { error: `${skill} needs argument '${arg.name}'` }
      parsed[arg.name] = arg.default
      continue
    }
    const got = parseArg(arg, given)
    if (got.error) return { error: got.error }
    parsed[arg.name] = got.value
  }
  return { args: parsed }
}

module.exports = { parseAction, normalizeId, MAX_STRING }
