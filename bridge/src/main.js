#!/usr/bin/env node
'use strict'
// MirrorCraft bridge: one Mineflayer bot driven by the Python side over stdio.
// stdout carries protocol lines only; everything else (library chatter) goes to stderr.

const readline = require('readline')
const { PROTOCOL, CODES, BridgeError, parseLine, okResponse, errorResponse, eventLine } = require('./protocol')

const rawWrite = process.stdout.write.bind(process.stdout)
for (const name of ['log', 'info', 'warn', 'debug']) console[name] = (...args) => console.error(...args)
process.stdout.write = (chunk, ...rest) => process.stderr.write(chunk, ...rest)

function send (line) {
  rawWrite(line + '\n')
}

function emit (event, data) {
  send(eventLine(event, data))
}

process.on('uncaughtException', (err) => emit('error', { message: String(err && err.stack ? err.stack : err).slice(0, 2000) }))
process.on('unhandledRejection', (err) => emit('error', { message: String(err && err.stack ? err.stack : err).slice(0, 2000) }))

let Session
try {
  Session = require('./session').Session
} catch (err) {
  // node_modules missing or broken: answer every call with a clear error instead of dying.
  Session = null
  emit('error', { message: `cannot load the bridge's Node packages: ${err.message}; run: npm ci --prefix bridge` })
}

const session = Session ? new Session(emit) : null
const versions = Session ? require('./session').versions() : {}

const methods = {
  hello: async (params) => {
    if (params.protocol !== undefined && params.protocol !== PROTOCOL) {
      throw new BridgeError(CODES.INVALID_PARAMS, `protocol ${params.protocol} is not supported (bridge speaks ${PROTOCOL})`)
    }
    return { protocol: PROTOCOL, node: process.version, ...versions }
  },
  ping: async () => ({ pong: true }),
  shutdown: async () => {
    if (session) await session.disconnect().catch(() => {})
    setTimeout(() => process.exit(0), 20)
    return { bye: true }
  }
}

async function dispatch (request) {
  if (methods[request.method]) return methods[request.method](request.params)
  if (!session) throw new BridgeError(CODES.INTERNAL, 'the bridge could not load mineflayer; run: npm ci --prefix bridge')
  const handler = session.methods()[request.method]
  if (!handler) throw new BridgeError(CODES.UNKNOWN_METHOD, `unknown method ${JSON.stringify(request.method).slice(0, 80)}`)
  return handler(request.params)
}

const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity })
rl.on('line', (line) => {
  if (!line.trim()) return
  const parsed = parseLine(line)
  if (parsed.error) {
    send(errorResponse(parsed.id, parsed.error))
    return
  }
  const { request } = parsed
  Promise.resolve()
    .then(() => dispatch(request))
    .then((result) => send(okResponse(request.id, result)))
    .catch((err) => send(errorResponse(request.id, err)))
})
rl.on('close', () => {
  const done = () => process.exit(0)
  if (session) session.disconnect().then(done, done)
  else done()
})

emit('ready', { protocol: PROTOCOL, node: process.version, ...versions })
