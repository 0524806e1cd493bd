// What bubblewrap's own set-up costs per command, and what each part of dsh's bwrap argv adds:
// the argv dsh builds today (Bubblewrap.wrap from the built dist, workspace-write, seccomp on
// fd 3, two masked secrets, bwrap started directly: no /bin/sh in front) against variants with
// one part removed or changed, and a bare `bash -c true`. Calls are interleaved one by one
// (A B C … A B C …) so load drifts hit every variant alike. Prints per-call wall ms, median
// (min–max), and the mean CPU ms of the whole bwrap tree (children's utime+stime from
// /proc/self/stat, clock ticks summed over the run). A benchmark: nothing asserted; the
// variants are measurements, not options dsh offers (see docs/decisions/0083).
//   node scripts/bench-bwrap.mjs [--calls N] [--links N]
// --links N: also time one call with N hard-linked files bound read-only (0021), 3 calls.
import { spawnSync } from 'node:child_process'
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { numberFlag } from './bench-args.mjs'

const root = fileURLToPath(new URL('..', import.meta.url))
const arg = numberFlag
const CALLS = arg('--calls', 200)
const LINKS = arg('--links', 0)

const { Bubblewrap } = await import(join(root, 'packages/exec/dist/sandbox/bubblewrap.js'))
const { unixSocketFilter } = await import(join(root, 'packages/exec/dist/sandbox/seccomp.js'))

const scratch = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-bench-bwrap-')))
const ws = join(scratch, 'ws')
const tmp = join(scratch, 'tmp')
const home = join(scratch, 'home')
for (const d of [ws, tmp, home]) mkdirSync(d)
const secrets = ['.credentials.yaml', 'cordis.patch.yml'].map((f) => join(home, f))
for (const f of secrets) writeFileSync(f, 'x')
const cacheDir = join(home, 'cache')
mkdirSync(cacheDir)
const filterFile = join(scratch, 'unix.bpf')
writeFileSync(filterFile, unixSocketFilter())

const policy = { mode: 'workspace-write', cwd: ws, writableRoots: [ws], tmpRoot: tmp, network: false }
/** dsh's argv without the `sh -c 'exec "$@" 3<FILE'` prefix (the spawner puts the filter on fd 3 itself). */
function dshArgv(confine = { masked: secrets, readOnly: [] }) {
  const argv = new Bubblewrap('bwrap').wrap(['true'], policy, ws, confine)
  const at = argv.indexOf('bwrap')
  return argv.slice(at)
}
const base = dshArgv()
const without = (argv, flag, n = 1) => {
  const out = [...argv]
  const i = out.indexOf(flag)
  if (i < 0) throw new Error(`no ${flag} in ${argv.join(' ')}`)
  out.splice(i, 1 + n)
  return out
}
const replace = (argv, flag, ...rest) => {
  const out = [...argv]
  out.splice(out.indexOf(flag), 1, ...rest)
  return out
}
const before = (argv, flag, ...rest) => {
  const out = [...argv]
  out.splice(out.indexOf(flag), 0, ...rest)
  return out
}

const variants = {
  'bash -c true': ['bash', '-c', 'true'],
  'bwrap floor: --ro-bind / / --unshare-user': ['bwrap', '--ro-bind', '/', '/', '--unshare-user', '--cap-drop', 'ALL', '--', 'true'],
  'dsh today (workspace-write, 2 masks)': base,
  '− --dev /dev': without(base, '--dev'),
  '− --proc /proc': without(base, '--proc'),
  '− the 2 masks': dshArgv({ masked: [], readOnly: [] }),
  '+ 10 more masks': dshArgv({ masked: [...secrets, ...Array.from({ length: 10 }, () => secrets[0])], readOnly: [] }),
  '+ 3 more masks (a cache of 3 entries, before)': dshArgv({ masked: [...secrets, secrets[0], secrets[0], secrets[0]], readOnly: [] }),
  '+ 1 hidden directory (the same cache, now)': dshArgv({ masked: secrets, readOnly: [], hiddenDirs: [cacheDir] }),
  '− --die-with-parent': without(base, '--die-with-parent', 0),
  '− --seccomp': without(base, '--seccomp'),
  '+ --share-net (not kept: 0022)': before(base, '--cap-drop', '--share-net'),
  'no uts/cgroup ns (user pid ipc net only)': replace(base, '--unshare-all', '--unshare-user', '--unshare-pid', '--unshare-ipc', '--unshare-net'),
  '+ --as-pid-1 (no reaper)': before(base, '--chdir', '--as-pid-1'),
}

/** Children's CPU (utime+stime) in ms so far: fields 16 and 17 of /proc/self/stat, in clock ticks (100/s). */
function childCpuMs() {
  const stat = readFileSync('/proc/self/stat', 'utf8')
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(f[13]) + Number(f[14])) * 10
}

function once(argv) {
  const fd = openSync(filterFile, 'r') // bwrap reads the filter to its end: a fresh offset per call
  const t0 = process.hrtime.bigint()
  const r = spawnSync(argv[0], argv.slice(1), { stdio: ['ignore', 'ignore', 'pipe', fd] })
  const ms = Number(process.hrtime.bigint() - t0) / 1e6
  closeSync(fd)
  if (r.status !== 0) throw new Error(`${argv.join(' ')}: exit ${r.status} ${r.stderr}`)
  return ms
}

const names = Object.keys(variants)
for (const n of names) for (let i = 0; i < 5; i++) once(variants[n]) // warm: page cache
const walls = Object.fromEntries(names.map((n) => [n, []]))
const cpus = Object.fromEntries(names.map((n) => [n, 0]))
for (let c = 0; c < CALLS; c++) {
  for (const n of names) {
    const u0 = childCpuMs()
    walls[n].push(once(variants[n]))
    cpus[n] += childCpuMs() - u0
  }
}

const median = (v) => { const s = [...v].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2 }
const fmt = (v) => `${median(v).toFixed(2)} (${Math.min(...v).toFixed(2)}–${Math.max(...v).toFixed(2)})`
const rows = [['variant', `wall ms, median (min–max) of ${CALLS}`, 'CPU ms (mean)', 'Δ median vs dsh today']]
for (const n of names) rows.push([n, fmt(walls[n]), (cpus[n] / CALLS).toFixed(2), (median(walls[n]) - median(walls[names[2]])).toFixed(2)])

if (LINKS > 0) {
  const dir = join(ws, 'linked')
  mkdirSync(dir)
  const outside = join(scratch, 'outside')
  mkdirSync(outside)
  const files = Array.from({ length: LINKS }, (_, i) => join(dir, `f${i}`))
  files.forEach((f, i) => { writeFileSync(join(outside, `f${i}`), ''); spawnSync('ln', ['-f', join(outside, `f${i}`), f]) })
  const linked = dshArgv({ masked: secrets, readOnly: files })
  const v = [once(linked), once(linked), once(linked)]
  rows.push([`dsh today + ${LINKS} hard links bound read-only`, fmt(v), '', (median(v) - median(walls[names[2]])).toFixed(2)])
}

const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')
const w = [0, 1, 2].map((i) => Math.max(...rows.map((r) => r[i].length)))
for (const r of rows) console.log(`${r[0].padEnd(w[0])}  ${r[1].padEnd(w[1])}  ${r[2].padEnd(w[2])}  ${r[3]}`)
console.log(`\nload average at the end: ${load}`)
rmSync(scratch, { recursive: true, force: true })
