#!/usr/bin/env node
'use strict'
// A controllable flying-squid 1.19 server on loopback for the bridge tests (no vanilla jar).
// Superflat world (bedrock, 3 dirt, grass) with a few test blocks placed near spawn.
// Prints "READY <port>" on stdout once it accepts connections; exits on SIGTERM or stdin EOF.
//
// Where flying-squid differs from a vanilla 1.19 server in what the bridge relies on, the harness
// makes it behave as vanilla does (each change is marked VANILLA below):
// - time packets carry the world's age in ticks (flying-squid always sends 0), every 20 ticks;
// - a player who digs a block gets the block update too (flying-squid sends it only to others);
// - a refused dig sends the block's real state back (flying-squid sends its type id).
//
// Control lines on stdin (each answered by one "OK <json>" or "ERR <message>" line on stdout):
//   kill <player>                 health to 0, as /kill does (the player dies)
//   kick <player> [reason...]     disconnect the player
//   lag <ms>                      delay every packet to players by ms (0: none), order kept
//   spike_after_dig <ms>          the next dig the server accepts starts a lag spike: what it
//                                 sends in the next 200 ms (block update, drops, time) arrives
//                                 ms late, as from a server that stalls right after the break
//   tps <n>                       run the server at n ticks per second (20: normal)
//   refuse_digs <on|off>          cancel every dig and send the block back, as a server that
//                                 refuses a break does
//   setblock <x> <y> <z> <block>  set a block (players see it)
//   give <player> <item> [count]  put items in the player's first empty slots
//   ticks                         {"ticks": the server's tick count}
//   block <x> <y> <z>             {"name": the block there, server side}
//   inventory <player>            {item: count} as the server holds it
const path = require('path')
const os = require('os')
const fs = require('fs')
const readline = require('readline')

const version = process.env.SQUID_VERSION || '1.19.2'
const port = Number(process.argv[2] || 0)

// flying-squid logs to stdout and runs its own console on stdin: keep the real stdin and stdout
// for the control lines, and give flying-squid an empty stdin and stderr as its stdout.
const { PassThrough } = require('stream')
const realStdin = process.stdin
const realStdout = process.stdout
const rawLog = (line) => realStdout.write(line + '\n')
console.log = (...args) => console.error(...args)
Object.defineProperty(process, 'stdin', { value: new PassThrough(), configurable: true })
Object.defineProperty(process, 'stdout', { value: process.stderr, configurable: true })

const mcServer = require('flying-squid')
const { Vec3 } = require('vec3')

const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'mc-squid-'))
const serv = mcServer.createMCServer({
  motd: 'mirrorcraft test',
  port,
  host: '127.0.0.1',
  'max-players': 4,
  'online-mode': false,
  logging: false,
  gameMode: 0,
  difficulty: 0,
  worldFolder: undefined,
  generation: { name: 'superflat', options: { seed: 1, middleThickness: 3 } },
  kickTimeout: 30000,
  plugins: {},
  modpe: false,
  'view-distance': 4,
  'player-list-text': { header: { text: '' }, footer: { text: '' } },
  'everybody-op': true,
  'max-entities': 200,
  version
})

// Test blocks near spawn (spawn is above the grass at y=4 in this superflat world).
const placements = [
  ['oak_log', [3, 5, 3]], ['oak_log', [3, 6, 3]], ['oak_log', [-4, 5, 2]],
  ['stone', [2, 4, -3]], ['stone', [3, 4, -3]], ['coal_ore', [-3, 4, -3]],
  ['crafting_table', [6, 5, 0]]
]

const control = { lagMs: 0, refuseDigs: false, spikeAfterDig: 0 }

function stateOf (name) {
  const block = serv.registry.blocksByName[name]
  if (!block) throw new Error(`unknown block ${name}`)
  return block.defaultState ?? block.minStateId
}

// VANILLA: the world's age in time packets, every 20 ticks (daylight cycle frozen, as the
// MirrorCraft setup function leaves it: a negative time of day).
serv.doDaylightCycle = false
serv.on('tick', (delta, count) => {
  if (count % 20 !== 0) return
  for (const player of serv.players) player._client.write('update_time', { age: BigInt(count), time: BigInt(-6000) })
})

// Every packet to a player goes through a queue that can hold it back (lag), order kept.
function lagged (player) {
  const client = player._client
  const write = client.write.bind(client)
  let last = 0
  client.write = (name, params) => {
    if (!control.lagMs && last <= Date.now()) return write(name, params)
    const at = Math.max(Date.now() + control.lagMs, last)
    last = at
    setTimeout(() => { try { write(name, params) } catch (e) {} }, at - Date.now())
  }
}

serv.on('newPlayer', (player) => {
  lagged(player)
  player.on('dug_cancel', (data, cancel) => {
    // VANILLA: a refused break sends the block's real state back to the digger.
    if (control.refuseDigs) {
      cancel(false)
      player._client.write('block_change', { location: data.position, type: data.block.stateId })
      return
    }
    if (control.spikeAfterDig) {
      control.lagMs = control.spikeAfterDig
      control.spikeAfterDig = 0
      setTimeout(() => { control.lagMs = 0 }, 200)
    }
  })
  player.on('dug_done', (data, cancelled) => {
    // VANILLA: the digger, too, gets the server's block update (air).
    if (!cancelled) player._client.write('block_change', { location: data.position, type: 0 })
  })
})

function player (name) {
  const found = serv.getPlayer(name)
  if (!found) throw new Error(`no player ${name}`)
  return found
}

const commands = {
  kill: ([name]) => { player(name).takeDamage({ damage: 20 }); return {} },
  kick: ([name, ...reason]) => { player(name).kick(reason.join(' ') || 'kicked by the test'); return {} },
  lag: ([ms]) => { control.lagMs = Math.max(0, Number(ms) || 0); return { lag_ms: control.lagMs } },
  tps: ([n]) => { serv.setTickInterval(Math.max(1, Number(n) || 20)); return { tps: Number(n) } },
  refuse_digs: ([flag]) => { control.refuseDigs = flag === 'on'; return { refuse_digs: control.refuseDigs } },
  spike_after_dig: ([ms]) => { control.spikeAfterDig = Math.max(0, Number(ms) || 0); return {} },
  setblock: async ([x, y, z, name]) => {
    await serv.setBlock(serv.overworld, new Vec3(Number(x), Number(y), Number(z)), stateOf(name))
    return {}
  },
  give: ([name, item, count]) => {
    const Item = require('prismarine-item')(serv.registry)
    const p = player(name)
    const info = serv.registry.itemsByName[item]
    if (!info) throw new Error(`unknown item ${item}`)
    let left = Number(count || 1)
    for (let slot = 36; slot < 45 && left > 0; slot++) {
      if (p.inventory.slots[slot]) continue
      const n = Math.min(left, info.stackSize)
      p.inventory.updateSlot(slot, new Item(info.id, n))
      left -= n
    }
    return { given: Number(count || 1) - left }
  },
  ticks: () => ({ ticks: serv.tickCount }),
  block: async ([x, y, z]) => {
    const block = await serv.overworld.getBlock(new Vec3(Number(x), Number(y), Number(z)))
    return { name: block.name }
  },
  inventory: ([name]) => {
    const out = {}
    for (const item of player(name).inventory.slots) if (item) out[item.name] = (out[item.name] || 0) + item.count
    return out
  }
}

serv.on('listening', (p) => {
  // flying-squid spawns players at a random spot up to 30 blocks from the origin; the tests
  // need the bot next to the blocks placed below, every time.
  serv.getSpawnPoint = async () => new Vec3(0.5, 5, 0.5)
  const placeAll = async () => {
    for (const [name, [x, y, z]] of placements) {
      await serv.overworld.setBlockStateId(new Vec3(x, y, z), stateOf(name))
    }
  }
  placeAll().then(() => rawLog(`READY ${p}`)).catch((err) => {
    console.error(err)
    process.exit(1)
  })
})
serv.on('error', (err) => { console.error(err); process.exit(1) })
const stop = () => { try { fs.rmSync(folder, { recursive: true, force: true }) } catch (e) {} process.exit(0) }
process.on('SIGTERM', stop)
process.on('SIGINT', stop)
const lines = readline.createInterface({ input: realStdin })
lines.on('line', (line) => {
  const [name, ...args] = line.trim().split(/\s+/)
  if (!name) return
  const handler = commands[name]
  if (!handler) { rawLog(`ERR unknown command ${name}`); return }
  Promise.resolve()
    .then(() => handler(args))
    .then((out) => rawLog(`OK ${JSON.stringify(out || {})}`), (err) => rawLog(`ERR ${String(err && err.message).replace(/\n/g, ' ')}`))
})
lines.on('close', stop)
