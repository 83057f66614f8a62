'use strict'
// Line-delimited JSON over stdio. Requests: {"id", "method", "params"}; responses carry the
// same id with {"ok": true, "result"} or {"ok": false, "error": {"code", "message"}}; events
// have no id: {"event", "data"}. A bad line gets an error response, never a crash.

const PROTOCOL = 1
const MAX_LINE = 1 << 20

const CODES = Object.freeze({
  BAD_JSON: 'bad_json',
  BAD_REQUEST: 'bad_request',
  UNKNOWN_METHOD: 'unknown_method',
  INVALID_PARAMS: 'invalid_params',
  NOT_CONNECTED: 'not_connected',
  DISCONNECTED: 'disconnected',
  BUSY: 'busy',
  TIMEOUT: 'timeout',
  UNSUPPORTED: 'unsupported',
  INTERNAL: 'internal'
})

class BridgeError extends Error {
  constructor (code, message) {
    super(message)
    this.code = code
  }
}

// Parse one input line: {request} or {error, id} (the id when it could be read).
function parseLine (line) {
  if (line.length > MAX_LINE) {
    return { error: new BridgeError(CODES.BAD_REQUEST, `line longer than ${MAX_LINE} bytes`), id: null }
  }
  let msg
  try {
    msg = JSON.parse(line)
  } catch (err) {
    return { error: new BridgeError(CODES.BAD_JSON, `not valid JSON: ${err.message}`), id: null }
  }
  if (msg === null || typeof msg !== 'object' || Array.isArray(msg)) {
    return { error: new BridgeError(CODES.BAD_REQUEST, 'a request must be a JSON object'), id: null }
  }
  const id = Number.isSafeInteger(msg.id) ? msg.id : null
  if (id === null) {
    return { error: new BridgeError(CODES.BAD_REQUEST, 'a request needs an integer "id"'), id: null }
  }
  if (typeof msg.method !== 'string' || msg.method.length === 0 || msg.method.length > 64) {
    return { error: new BridgeError(CODES.BAD_REQUEST, 'a request needs a "method" string'), id }
  }
  const params = msg.params === undefined ? {} : msg.params
  if (params === null || typeof params !== 'object' || Array.isArray(params)) {
    return { error: new BridgeError(CODES.INVALID_PARAMS, '"params" must be an object'), id }
  }
  return { request: { id, method: msg.method, params } }
}

function okResponse (id, result) {
  return JSON.stringify({ id, ok: true, result: result === undefined ? null : result })
}

function errorResponse (id, error) {
  const code = error instanceof BridgeError ? error.code : CODES.INTERNAL
  const message = String((error && error.message) || error).slice(0, 2000)
  return JSON.stringify({ id, ok: false, error: { code, message } })
}

function eventLine (event, data) {
  return JSON.stringify({ event, data: data === undefined ? {} : data })
}

module.exports = { PROTOCOL, CODES, BridgeError, parseLine, okResponse, errorResponse, eventLine }
