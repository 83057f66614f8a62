'use strict'
// A scripted stand-in for a crafting window and the server behind it, for unit tests of the
// click sequence. The "server" computes the result slot from a lookup the test supplies (it
// plays the role of the server's recipes) and answers each grid click like 1.17+ servers do:
// with an update of slot 0. It never exposes a recipe API to the code under test.

const { EventEmitter } = require('events')

class FakeItem {
  constructor (name, count, enchants) {
    this.name = name
    this.count = count
    this.type = name.length // any stable number
    this.stackSize = 64
    this.enchants = enchants || []
  }
}

class FakeWindow extends EventEmitter {
  constructor ({ width, inventory, craft, answer = true, dropClick = null }) {
    super()
    this.width = width
    this.gridSize = width * width
    this.inventoryStart = 1 + this.gridSize
    this.inventoryEnd = this.inventoryStart + 36
    this.slots = new Array(this.inventoryEnd).fill(null)
    inventory.forEach((item, i) => { this.slots[this.inventoryStart + i] = item })
    this.selectedItem = null
    this.craft = craft // grid of names -> {name, count} | null
    this.answer = answer
    this.dropClick = dropClick // a slot whose first click the server never answers (lag, a lost packet)
    this.clicks = []
  }

  grid () {
    const rows = []
    for (let r = 0; r < this.width; r++) {
      const row = []
      for (let c = 0; c < this.width; c++) {
        const item = this.slots[1 + c + this.width * r]
        row.push(item ? item.name : null)
      }
      rows.push(row)
    }
    return rows
  }

  updateSlot (slot, item) {
    this.slots[slot] = item
    this.emit(`updateSlot:${slot}`, item)
  }

  serverResult () {
    const out = this.craft(this.grid())
    this.updateSlot(0, out ? new FakeItem(out.name, out.count) : null)
  }
}

class FakeBot {
  constructor (window) {
    this.window = window
    this.recipesFor = () => { throw new Error('recipesFor must never be called') }
    this.craft = () => { throw new Error('craft must never be called') }
  }

  async waitForTicks () {}

  async clickWindow (slot, mouseButton, mode) {
    const w = this.window
    w.clicks.push([slot, mouseButton, mode])
    if (mode !== 0) throw new Error('only plain clicks are expected')
    if (w.dropClick === slot) {
      w.dropClick = null
      return new Promise(() => {}) // this click is lost; the server answers the next ones
    }
    const item = w.slots[slot]
    if (slot === 0) {
      if (!item || w.selectedItem) return
      w.selectedItem = item
      w.updateSlot(0, null)
      for (let s = 1; s <= w.gridSize; s++) { // the server consumes one of each ingredient
        const g = w.slots[s]
        if (g) { g.count -= 1; w.updateSlot(s, g.count > 0 ? g : null) }
      }
      w.serverResult()
      return
    }
    if (mouseButton === 1 && w.selectedItem) {
      if (item && item.name !== w.selectedItem.name) throw new Error('right click on a different item')
      w.updateSlot(slot, new FakeItem(w.selectedItem.name, (item ? item.count : 0) + 1, w.selectedItem.enchants))
      w.selectedItem.count -= 1
      if (w.selectedItem.count === 0) w.selectedItem = null
    } else if (mouseButton === 0) {
      if (w.selectedItem && item && item.name === w.selectedItem.name) {
        item.count += w.selectedItem.count
        w.selectedItem = null
        w.updateSlot(slot, item)
      } else {
        const held = w.selectedItem
        w.selectedItem = item
        w.updateSlot(slot, held)
      }
    }
    if (slot >= 1 && slot <= w.gridSize) {
      if (!w.answer) return new Promise(() => {}) // a server that never answers grid clicks
      w.serverResult()
    }
  }

  async putSelectedItemRange (start, end, window) {
    while (window.selectedItem) {
      const same = window.slots.findIndex((it, i) => i >= start && i < end && it && it.name === window.selectedItem.name)
      const empty = window.slots.findIndex((it, i) => i >= start && i < end && !it)
      const target = same >= 0 ? same : empty
      if (target < 0) throw new Error('no room')
      await this.clickWindow(target, 0, 0)
    }
  }
}

function totals (window) {
  const out = {}
  for (let s = window.inventoryStart; s < window.inventoryEnd; s++) {
    const it = window.slots[s]
    if (it) out[it.name] = (out[it.name] || 0) + it.count
  }
  return out
}

module.exports = { FakeItem, FakeWindow, FakeBot, totals }
