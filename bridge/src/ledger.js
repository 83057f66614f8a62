'use strict'
// What the server itself said, as opposed to what the client predicted: block updates at watched
// positions, the item entities it spawned (where and during which action), and which of them the
// player picked up. mineflayer sets a dug block to air before the server agrees; the skills ask
// the ledger instead, so a lagging or refusing server reads as "mined nothing", and an item that
// belongs to an earlier action is never credited to the current one.

const { Vec3 } = require('vec3')

const PENDING_MS = 60000 // how long a dig the server never confirmed can still produce drops

function key (pos) { return `${pos.x},${pos.y},${pos.z}` }

class Ledger {
  constructor (bot, { now } = {}) {
    this.bot = bot
    this._now = now || (() => Date.now())
    this.watches = new Map() // position key -> Set of watch objects
    this.items = new Map() // entity id -> {id, pos, seq, action, stale}
    this.seq = 0
    this.action = 0
    this.pending = [] // digs the server did not confirm: {pos, at}
    this.allowed = new Set() // stale entity ids the current action may pick up (collect's target)
    this.staleGain = {} // item -> count picked up this action from entities that are not its own
    this.collected = new Set() // entity ids the player picked up
    this.itemType = bot.registry && bot.registry.entitiesByName && bot.registry.entitiesByName.item
      ? bot.registry.entitiesByName.item.id : null
    const client = bot._client
    client.on('block_change', (p) => this._block(p.location, p.type))
    client.on('multi_block_change', (p) => this._multi(p))
    client.on('spawn_entity', (p) => this._spawn(p))
    client.on('entity_destroy', (p) => { for (const id of p.entityIds || []) this._gone(id) })
    bot.on('playerCollect', (collector, collected) => this._collect(collector, collected))
  }

  // -- actions ------------------------------------------------------------------------------
  beginAction () {
    this.action += 1
    this.staleGain = {}
    this.allowed = new Set()
    const cutoff = this._now() - PENDING_MS
    this.pending = this.pending.filter(p => p.at >= cutoff)
    for (const item of this.items.values()) item.stale = true // spawned before this action
  }

  allow (entityId) { this.allowed.add(entityId) }

  // -- blocks -------------------------------------------------------------------------------
  // Record the server's block updates at pos from now on: {state, seen, stop()}.
  watchBlock (pos) {
    const k = key(pos)
    const watch = { state: undefined, seen: 0, stop: () => {} }
    if (!this.watches.has(k)) this.watches.set(k, new Set())
    this.watches.get(k).add(watch)
    watch.stop = () => {
      const set = this.watches.get(k)
      if (set) { set.delete(watch); if (!set.size) this.watches.delete(k) }
    }
    return watch
  }

  _block (location, state) {
    const set = this.watches.get(key(location))
    if (!set) return
    for (const watch of set) { watch.state = state; watch.seen += 1 }
  }

  _multi (packet) {
    if (!packet.records || !packet.chunkCoordinates) return
    const c = packet.chunkCoordinates
    for (const record of packet.records) {
      const x = c.x * 16 + ((record >> 8) & 0x0f)
      const z = c.z * 16 + ((record >> 4) & 0x0f)
      const y = c.y * 16 + (record & 0x0f)
      this._block({ x, y, z }, Math.floor(record / 4096))
    }
  }

  // A dig the server did not answer in time: drops that appear there later belong to no action.
  addPending (pos) { this.pending.push({ pos: new Vec3(pos.x + 0.5, pos.y + 0.5, pos.z + 0.5), at: this._now() }) }

  // A new dig at pos: an older unanswered dig there no longer explains what drops.
  clearPending (pos) {
    const center = new Vec3(pos.x + 0.5, pos.y + 0.5, pos.z + 0.5)
    this.pending = this.pending.filter(p => p.pos.distanceTo(center) > 0.01)
  }

  // -- item entities ------------------------------------------------------------------------
  _spawn (p) {
    if (this.itemType === null || p.type !== this.itemType) return
    const pos = new Vec3(p.x, p.y, p.z)
    const orphan = this.pending.some(d => d.pos.distanceTo(pos) <= 1.5)
    this.seq += 1
    this.items.set(p.entityId, { id: p.entityId, pos, seq: this.seq, action: this.action, stale: orphan })
  }

  // Item entities spawned after `sinceSeq` within `radius` of pos (a block's centre).
  itemsNear (center, radius, sinceSeq) {
    const out = []
    for (const item of this.items.values()) {
      if (item.seq > sinceSeq && !item.stale && item.pos.distanceTo(center) <= radius) out.push(item)
    }
    return out.sort((a, b) => a.seq - b.seq)
  }

  _collect (collector, collected) {
    if (!collector || !collected || collector !== this.bot.entity) return
    this.collected.add(collected.id)
    const info = this.items.get(collected.id)
    const stale = info ? info.stale : true
    if (stale && !this.allowed.has(collected.id)) {
      const item = this._itemOf(collected)
      if (item) this.staleGain[item.name] = (this.staleGain[item.name] || 0) + item.count
    }
    this.items.delete(collected.id)
  }

  _itemOf (entity) {
    let raw = null
    for (const entry of entity.metadata || []) {
      if (entry && typeof entry === 'object' && ('itemId' in entry || 'present' in entry)) raw = entry
    }
    if (!raw || raw.present === false || raw.itemId === undefined) return null
    const item = this.bot.registry.items[raw.itemId]
    return item ? { name: item.name, count: raw.itemCount || 1 } : null
  }

  // An entity the server removed: keep a short memory of it so a pickup packet that follows is
  // still attributed, then forget it.
  _gone (entityId) {
    const item = this.items.get(entityId)
    if (!item) return
    item.gone = true
    setTimeout(() => { if (this.items.get(entityId) === item) this.items.delete(entityId) }, 5000).unref()
  }
}

module.exports = { Ledger, key }
