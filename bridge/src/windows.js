'use strict'
// Crafting through window clicks: put one of each given item into the grid slots, read what
// the server shows in the result slot, take it. The server alone decides the result: this
// never looks up a recipe (mineflayer's recipesFor/craft carry vanilla recipes; never used).
// Whatever happens, what was put in the grid or picked up on the cursor goes back to the
// inventory before craftGrid returns or throws.

const { BridgeError, CODES } = require('./protocol')

const RESULT_SLOT = 0

function withTimeout (promise, ms, what) {
  let timer
  const limit = new Promise((resolve, reject) => {
    timer = setTimeout(() => reject(new BridgeError(CODES.TIMEOUT, `${what}: the server did not answer within ${ms} ms`)), ms)
  })
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer))
}

function gridSlot (row, col, width) {
  return 1 + col + width * row
}

function findSource (window, name) {
  let best = null
  for (let slot = window.inventoryStart; slot < window.inventoryEnd; slot++) {
    const item = window.slots[slot]
    if (!item || item.name !== name) continue
    const plain = !(item.enchants && item.enchants.length)
    if (best === null || (plain && !best.plain)) best = { slot, plain }
  }
  return best ? best.slot : null
}

async function putCursorAway (bot, window, preferSlot, clickMs) {
  if (!window.selectedItem) return
  if (preferSlot !== null && !window.slots[preferSlot]) {
    await withTimeout(bot.clickWindow(preferSlot, 0, 0), clickMs, 'returning an item')
  }
  if (window.selectedItem) {
    await withTimeout(bot.putSelectedItemRange(window.inventoryStart, window.inventoryEnd, window, null), clickMs * 4, 'returning an item')
  }
}

// Empty the grid (and the cursor) back into the inventory part of the window.
async function clearGrid (bot, window, width, clickMs) {
  await putCursorAway(bot, window, null, clickMs)
  for (let slot = 1; slot <= width * width; slot++) {
    if (!window.slots[slot]) continue
    await withTimeout(bot.clickWindow(slot, 0, 0), clickMs, 'clearing the grid')
    await putCursorAway(bot, window, null, clickMs)
  }
}

// grid: rows of item names or null, at most width x width. Returns {name, count} or null.
// settle(ticks) waits game ticks on the server's clock (the caller's); none: no settling.
async function craftGrid (bot, window, grid, width, { clickMs = 5000, settleTicks = 2, settle = null } = {}) {
  const wait = async () => { if (settleTicks && settle) await settle(settleTicks) }
  let done = false
  try {
    const result = await fillAndTake(bot, window, grid, width, clickMs, wait)
    done = true
    return result
  } finally {
    if (!done) {
      // A click failed half-way: give back what is in the grid and on the cursor (best effort;
      // anything left there still counts as owned in the observation).
      try { await clearGrid(bot, window, width, clickMs) } catch (e) {}
    }
  }
}

async function fillAndTake (bot, window, grid, width, clickMs, wait) {
  await putCursorAway(bot, window, null, clickMs)
  let source = null
  for (let r = 0; r < grid.length; r++) {
    for (let c = 0; c < grid[r].length; c++) {
      const name = grid[r][c]
      if (!name) continue
      if (!window.selectedItem || window.selectedItem.name !== name) {
        await putCursorAway(bot, window, source, clickMs)
        source = findSource(window, name)
        if (source === null) throw new BridgeError(CODES.INTERNAL, `no ${name} left to put in the grid`)
        await withTimeout(bot.clickWindow(source, 0, 0), clickMs, 'picking up an item')
      }
      // A right click puts one item in the cell; the server answers with the result slot.
      await withTimeout(bot.clickWindow(gridSlot(r, c, width), 1, 0), clickMs, 'placing an item in the grid')
    }
  }
  await putCursorAway(bot, window, source, clickMs)
  await wait()
  const shown = window.slots[RESULT_SLOT]
  if (!shown) {
    await clearGrid(bot, window, width, clickMs)
    return null
  }
  const result = { name: shown.name, count: shown.count }
  await withTimeout(bot.clickWindow(RESULT_SLOT, 0, 0), clickMs, 'taking the result')
  await putCursorAway(bot, window, null, clickMs)
  await wait()
  await clearGrid(bot, window, width, clickMs) // remainders (e.g. buckets) and anything left over
  return result
}

module.exports = { craftGrid, clearGrid, gridSlot, findSource, withTimeout, RESULT_SLOT }
