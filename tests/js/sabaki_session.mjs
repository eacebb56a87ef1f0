// Drive a GTP engine the way Sabaki does, through Sabaki's own GTP library (@sabaki/gtp).
//
//   node sabaki_session.mjs <engine> [engine args...]
//
// Runs Sabaki's sequence (name, version, protocol_version, list_commands, state sync with komi,
// boardsize, clear_board and pipelined play/undo via ControllerStateTracker and Promise.all,
// genmove, kata-genmove_analyze, lz-analyze / kata-analyze aborted by `protocol_version`) and checks
// every reply with @sabaki/gtp's Response objects. Prints one JSON object on stdout:
//   {ok, failures: [...], transcript: [...], info: {...}, exit: {code, signal}}
// and exits 0 when every check passed (tests/test_gtp_clients.py runs it).

import gtp from '@sabaki/gtp'

const {Controller, ControllerStateTracker, Response} = gtp

const [enginePath, ...engineArgs] = process.argv.slice(2)
if (!enginePath) {
  console.error('usage: node sabaki_session.mjs <engine> [args...]')
  process.exit(2)
}

const failures = []
const transcript = []
const info = {}
const stderrLines = []
const rawStdout = []

function check(cond, message) {
  if (!cond) failures.push(message)
  return cond
}

const COLUMNS = 'ABCDEFGHJKLMNOPQRSTUVWXYZ'
const SIZE = 19

// The vertex helpers Sabaki gets from @sabaki/go-board (parseVertex) and sgf (stringifyVertex).
function parseVertex(v) {
  if (typeof v !== 'string' || v.length < 2) return [-1, -1]
  const x = COLUMNS.indexOf(v[0].toUpperCase())
  const y = SIZE - +v.slice(1)
  if (x < 0 || x >= SIZE || !/^\d+$/.test(v.slice(1)) || y < 0 || y >= SIZE) return [-1, -1]
  return [x, y]
}
function sgfPoint(v) {
  const [x, y] = parseVertex(v)
  return 'abcdefghijklmnopqrstuvwxyz'[x] + 'abcdefghijklmnopqrstuvwxyz'[y]
}
const onBoard = (v) => parseVertex(v)[0] >= 0

// Sabaki's analysis parser (src/modules/analysis.js parseAnalysis): split on `info`, the PV is the
// trailing run of vertices (so `pv` must come last), key/value pairs before it; segments without
// `move`/`winrate` or whose move is not a board vertex are dropped. Returns [variations, problems].
function parseAnalysis(line, winrateFormat) {
  const problems = []
  const variations = []
  const segments = line.split(/\s*info\s+/).slice(1).map((x) => x.trim())
  for (const seg of segments) {
    const matchPV = seg.match(/(pass|[A-Za-z]\d+)(\s+(pass|[A-Za-z]\d+))*$/)
    if (matchPV == null) {
      problems.push(`segment without a trailing PV: ${seg.slice(0, 80)}`)
      continue
    }
    const tokens = seg.slice(0, matchPV.index).trim().split(/\s+/)
    if (tokens[tokens.length - 1] !== 'pv') problems.push(`'pv' is not last in: ${seg.slice(0, 80)}`)
    const kv = {}
    const pairs = tokens.slice(0, -1)
    if (pairs.length % 2 !== 0) problems.push(`odd key/value list in: ${seg.slice(0, 80)}`)
    for (let i = 0; i + 1 < pairs.length; i += 2) kv[pairs[i]] = pairs[i + 1]
    for (const key of ['move', 'visits', 'winrate']) {
      if (kv[key] == null) problems.push(`segment without '${key}': ${seg.slice(0, 80)}`)
    }
    if (!/^\d+$/.test(kv.visits || '')) problems.push(`visits not an integer: ${kv.visits}`)
    if (winrateFormat === 'integer') {
      if (!/^\d+$/.test(kv.winrate || '') || +kv.winrate > 10000) {
        problems.push(`lz-analyze winrate not an integer in 0..10000: ${kv.winrate}`)
      }
    } else if (!/^-?\d+(\.\d+)?(e-?\d+)?$/.test(kv.winrate || '') || +kv.winrate < 0 || +kv.winrate > 1) {
      problems.push(`kata-analyze winrate not a float in [0,1]: ${kv.winrate}`)
    }
    if (kv.move === 'pass') continue // Sabaki drops these
    if (!onBoard(kv.move || '')) {
      problems.push(`move is not a board vertex: ${kv.move}`)
      continue
    }
    let pv = matchPV[0]
    const passIndex = pv.indexOf('pass')
    if (passIndex >= 0) pv = pv.slice(0, passIndex)
    const moves = pv.split(/\s+/).filter((x) => x.length >= 2)
    if (moves.length === 0 || moves[0].toUpperCase() !== kv.move.toUpperCase()) {
      problems.push(`PV does not start with the move: ${kv.move} / ${matchPV[0].slice(0, 40)}`)
    }
    for (const m of moves) if (!onBoard(m)) problems.push(`PV vertex off the board: ${m}`)
    const winrate = winrateFormat === 'float' ? +kv.winrate * 100 : +kv.winrate / 100
    variations.push({vertex: parseVertex(kv.move), visits: +kv.visits, winrate,
      scoreLead: kv.scoreLead != null ? +kv.scoreLead : null, moves: moves.map(parseVertex)})
  }
  return [variations, problems]
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
function withTimeout(promise, ms, what) {
  let timer
  return Promise.race([
    promise,
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`timeout after ${ms} ms: ${what}`)), ms)
    }),
  ]).finally(() => clearTimeout(timer))
}

const controller = new Controller(enginePath, engineArgs)
const tracker = new ControllerStateTracker(controller)
controller.on('stderr', ({content}) => stderrLines.push(content))
controller.on('command-sent', ({command, getResponse}) => {
  const entry = {command: `${command.name} ${command.args.join(' ')}`.trim()}
  transcript.push(entry)
  getResponse().then(
    (r) => Object.assign(entry, {error: r.error, content: r.content}),
    (e) => Object.assign(entry, {exception: String(e)}),
  )
})
controller.start()
let exitInfo = null
controller.process.once('exit', (code, signal) => (exitInfo = {code, signal}))
controller.process.stdout.on('data', (chunk) => rawStdout.push(chunk.toString('utf8')))

// Send one command and check the reply is a success (Sabaki's Response: {id, content, error}).
async function ok(name, args = [], subscriber) {
  const response = await withTimeout(controller.sendCommand({name, args}, subscriber), 60000, name)
  check(response.error === false, `${name} ${args.join(' ')} failed: ${response.content}`)
  check(response.id === null, `${name}: unexpected id ${response.id} (Sabaki sends none)`)
  // The reply survives a round trip through Sabaki's own formatter/parser.
  const again = Response.fromString(Response.toString(response))
  check(again.content === response.content && again.error === response.error,
    `${name}: Response round trip changed the reply`)
  return response
}

async function analysis(name, args, winrateFormat) {
  const infoLines = []
  let firstInfo
  const gotInfo = new Promise((resolve) => (firstInfo = resolve))
  const pending = controller.sendCommand({name, args}, ({line}) => {
    if (line.startsWith('info')) {
      infoLines.push(line)
      firstInfo()
    }
  })
  // Sabaki leaves the analysis running; wait for at least one update (the first network calls of a
  // fresh process are slow), then abort it the way Sabaki does: by sending `protocol_version`.
  try {
    await withTimeout(gotInfo, 30000, `first info line of ${name}`)
  } catch (e) {
    failures.push(String(e))
  }
  await sleep(300)
  const abort = controller.sendCommand({name: 'protocol_version', args: []})
  const [response, abortResponse] = await withTimeout(Promise.all([pending, abort]), 30000,
    `${name} aborted by protocol_version`)
  check(response.error === false, `${name} failed: ${response.content}`)
  check(abortResponse.error === false && abortResponse.content === '2',
    `protocol_version after ${name}: ${JSON.stringify(abortResponse)}`)
  check(infoLines.length >= 1, `${name}: no info line arrived`)
  let variations = 0
  for (const line of infoLines) {
    const [vars, problems] = parseAnalysis(line, winrateFormat)
    for (const p of problems) failures.push(`${name}: ${p}`)
    variations += vars.length
    if (winrateFormat === 'float' && vars.length) {
      check(vars.every((v) => v.scoreLead != null && Number.isFinite(v.scoreLead)),
        `${name}: scoreLead missing or not a number`)
    }
  }
  check(variations >= 1, `${name}: Sabaki's parser found no variation on the board`)
  // The response content (what Sabaki's Response holds) is the analysis lines themselves.
  const contentLines = response.content.split('\n').filter((l) => l.trim() !== '')
  check(contentLines.every((l) => l.startsWith('info ')),
    `${name}: response content holds non-info lines: ${contentLines.find((l) => !l.startsWith('info '))}`)
  info[name] = {lines: infoLines.length, variations, first: infoLines[0] ? infoLines[0].slice(0, 300) : null}
}

async function expectSgfMoves(expected, what) {
  const sgf = (await ok('printsgf')).content
  const moves = [...sgf.matchAll(/;\s*([BW])\[([a-z]{0,2})\]/g)].map((m) => `${m[1]}[${m[2]}]`)
  const want = expected.map(([c, v]) => `${c}[${v === 'pass' ? '' : sgfPoint(v)}]`)
  check(JSON.stringify(moves) === JSON.stringify(want),
    `${what}: engine history ${moves.join('')} != ${want.join('')}`)
}

async function main() {
  // Startup (Sabaki enginesyncer.js): name, version, protocol_version, list_commands.
  const [name, version, protocolVersion, listCommands] = await Promise.all(
    ['name', 'version', 'protocol_version', 'list_commands'].map((n) => ok(n)))
  check(name.content === 'azgo', `name: ${name.content}`)
  check(/^\d+\.\d+/.test(version.content), `version: ${version.content}`)
  check(protocolVersion.content === '2', `protocol_version: ${protocolVersion.content}`)
  const commands = listCommands.content.split('\n').map((x) => x.trim())
  for (const c of ['undo', 'lz-analyze', 'kata-analyze', 'kata-genmove_analyze', 'genmove', 'play']) {
    check(commands.includes(c), `list_commands lacks ${c}`)
  }
  check(!commands.includes('analyze'), 'list_commands lists analyze (Sabaki would use it first)')
  info.analyzeCommand = ['analyze', 'kata-analyze', 'lz-analyze'].find((c) => commands.includes(c))
  info.genmoveCommand = ['genmove_analyze', 'kata-genmove_analyze', 'lz-genmove_analyze']
    .find((c) => commands.includes(c)) || 'genmove'

  // Sync (ControllerStateTracker._sync): komi, boardsize, then clear_board + every play at once.
  const history = [['B', 'Q16'], ['W', 'D4'], ['B', 'Q3'], ['W', 'D16'], ['B', 'R10']]
  const asCommands = (h) => h.map(([c, v]) => ({name: 'play', args: [c, v]}))
  await withTimeout(tracker.sync({komi: 7.5, boardsize: [SIZE, SIZE], history: asCommands(history)}),
    60000, 'first sync')
  await expectSgfMoves(history, 'after the first sync')

  // A variation: shared prefix of 3 moves -> `undo` x2 + new plays, all pipelined by Promise.all.
  const variation = [...history.slice(0, 3), ['W', 'C16'], ['B', 'R16'], ['W', 'pass'], ['B', 'O17']]
  const before = transcript.length
  await withTimeout(tracker.sync({komi: 7.5, boardsize: [SIZE, SIZE], history: asCommands(variation)}),
    60000, 'second sync')
  const synced = transcript.slice(before).map((t) => t.command)
  check(synced.filter((c) => c === 'undo').length === 2 && !synced.includes('clear_board'),
    `second sync did not go through undo: ${synced.join('; ')}`)
  await expectSgfMoves(variation, 'after the undo sync')

  // Pipelined play/undo straight through the controller, all sent before any reply is read.
  const burst = [
    {name: 'play', args: ['W', 'K10']}, {name: 'play', args: ['B', 'K11']}, {name: 'undo', args: []},
    {name: 'play', args: ['B', 'K9']}, {name: 'play', args: ['W', 'K9']}, {name: 'undo', args: []},
    {name: 'undo', args: []},
  ]
  const replies = await withTimeout(Promise.all(burst.map((c) => controller.sendCommand(c))), 60000, 'burst')
  replies.forEach((r, i) => {
    const c = burst[i]
    const want = i === 4 // W K9 on Black's K9 stone is illegal
    check(r.error === want, `pipelined ${c.name} ${c.args.join(' ')}: ${JSON.stringify(r)}`)
  })
  check(replies[4].content === 'illegal move', `W K9 on a stone: got ${replies[4].content}`)
  await expectSgfMoves(variation, 'after the pipelined burst')
  // The tracker saw the burst too; resync it to the engine's real state.
  await tracker.sync({komi: 7.5, boardsize: [SIZE, SIZE], history: asCommands(variation)})

  // Move generation: plain genmove, then Sabaki's preferred kata-genmove_analyze with its play line.
  const gen = await ok('genmove', ['W'])
  check(/^([A-HJ-T](1[0-9]|[1-9])|pass|resign)$/i.test(gen.content), `genmove W: ${gen.content}`)
  let playLine = null
  const genAnalyze = await ok(info.genmoveCommand, ['B', '50'], ({line}) => {
    const m = line.trim().match(/^play\s+(.*)$/)
    if (m) playLine = m[1]
  })
  check(playLine != null && /^([A-HJ-T](1[0-9]|[1-9])|pass|resign)$/i.test(playLine),
    `${info.genmoveCommand}: play line ${playLine}`)
  check(/(^|\n)play /.test(genAnalyze.content), `${info.genmoveCommand}: content lacks the play line`)
  info.genmove = gen.content
  info.genmoveAnalyze = playLine
  const played = [...variation, ['W', gen.content.toUpperCase()], ['B', (playLine || '').toUpperCase()]]
    .map(([c, v]) => [c, v === 'PASS' ? 'pass' : v])
  await expectSgfMoves(played, 'after genmove')

  // Analysis, aborted by protocol_version.
  await analysis('lz-analyze', ['W', '50'], 'integer')
  await analysis('kata-analyze', ['W', '50'], 'float')

  // The engine is still in sync and answering.
  await expectSgfMoves(played, 'after analysis')
  const bad = await controller.sendCommand({name: 'play', args: ['W', 'Q16']})
  check(bad.error === true && bad.content === 'illegal move', `play on an occupied point: ${JSON.stringify(bad)}`)
  const unknown = await controller.sendCommand({name: 'analyze', args: ['B', '50']})
  check(unknown.error === true, `analyze should be unknown: ${JSON.stringify(unknown)}`)

  await withTimeout(controller.stop(5000), 10000, 'stop')
}

const watchdog = setTimeout(() => {
  failures.push('session watchdog: 150 s elapsed')
  finish()
}, 150000)

let finished = false
async function finish() {
  if (finished) return
  finished = true
  clearTimeout(watchdog)
  if (controller.process != null) await controller.kill()
  for (let i = 0; i < 50 && exitInfo == null; i++) await sleep(20)
  // stdout carried GTP replies and analysis lines only.
  const lines = rawStdout.join('').split('\n')
  if (lines[lines.length - 1] === '') lines.pop()
  for (const line of lines) {
    if (!(line === '' || /^[=?]/.test(line) || line.startsWith('info ') || line.startsWith('play ') ||
      /^[A-Za-z0-9-_]+$/.test(line) || transcriptContains(line))) {
      failures.push(`unexpected stdout line: ${line.slice(0, 100)}`)
    }
  }
  for (const line of stderrLines) {
    if (/^(=|\?|info|play)/.test(line)) failures.push(`stderr line a client would misread: ${line}`)
  }
  const out = {ok: failures.length === 0, failures, info, transcript, exit: exitInfo,
    stderr: stderrLines.slice(-20)}
  // Exit only once the JSON is flushed (stdout is a pipe: a plain exit could truncate it).
  process.stdout.write(JSON.stringify(out) + '\n', () => process.exit(failures.length === 0 ? 0 : 1))
}

// Lines that belong to a multi-line reply (list_commands, printsgf) are fine on stdout.
function transcriptContains(line) {
  return transcript.some((t) => typeof t.content === 'string' && t.content.split('\n').includes(line.trim()))
}

main().then(finish, (e) => {
  failures.push(`exception: ${e && e.stack ? e.stack : e}`)
  finish()
})
