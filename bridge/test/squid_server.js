#!/usr/bin/env node
'use strict'
// A flying-squid 1.19 server on loopback for the bridge tests (no vanilla jar needed).
// Superflat world (bedrock, 3 dirt, grass) with a few test blocks placed near spawn.
// Prints "READY <port>" on stdout once it accepts connections; exits on SIGTERM or stdin EOF.
const path = require('path')
const os = require('os')
const fs = require('fs')

const version = process.env.SQUID_VERSION || '1.19.2'
const port = Number(process.argv[2] || 0)

// flying-squid logs to stdout; keep stdout for our one line and send its chatter to stderr.
const rawLog = console.log
console.log = (...args) => console.error(...args)

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

serv.on('listening', (p) => {
  // flying-squid spawns players at a random spot up to 30 blocks from the origin; the tests
  // need the bot next to the blocks placed below, every time.
  serv.getSpawnPoint = async () => new Vec3(0.5, 5, 0.5)
  const placeAll = async () => {
    for (const [name, [x, y, z]] of placements) {
      const block = serv.registry.blocksByName[name]
      await serv.overworld.setBlockStateId(new Vec3(x, y, z), block.defaultState ?? block.minStateId)
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
process.stdin.on('end', stop)
process.stdin.resume()
