// `node scripts/bench-ssh.mjs` (after `npm run build`; needs root and openssh-server):
// the cost of one operation in the SSH world on loopback (medians over N runs, min–max),
// next to the local world, and the wall time of `dsh batch` with 32 tasks × 3 steps
// (2 bash calls + the answer) over 4 hosts (4 users of one sshd, 8 slots each) at
// --parallel 1, 8 and 32. The model is the testkit's scripted mock. Nothing is asserted.
import { execFileSync, spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, readdirSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const runs = Number(process.env.BENCH_RUNS ?? 30)
if (process.getuid?.() !== 0) {
  console.log('bench-ssh: needs root (it creates test users for sshd); skipped')
  process.exit(0)
}
const { Context } = await import(join(root, 'node_modules/@deepseek-ai/cordis/lib/index.js'))
const { SshWorld } = await import(join(root, 'packages/world-ssh/dist/index.js'))
const exec = await import(join(root, 'packages/exec/dist/index.js'))
const { startMockModel } = await import(join(root, 'packages/testkit/dist/index.js'))

// --- an sshd on a free loopback port, 4 users -------------------------------------------
const dir = mkdtempSync(join(tmpdir(), 'dsh-bench-ssh-'))
const keygen = (f) => execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', f])
keygen(join(dir, 'host')); keygen(join(dir, 'id'))
const tag = Math.random().toString(16).slice(2, 8)
const users = [0, 1, 2, 3].map((i) => {
  const name = `dshb${tag}${i}`
  execFileSync('useradd', ['-m', '-s', '/bin/sh', '-p', '*', name])
  mkdirSync(`/home/${name}/.ssh`, { mode: 0o700 })
  writeFileSync(`/home/${name}/.ssh/authorized_keys`, readFileSync(join(dir, 'id.pub')))
  execFileSync('chown', ['-R', `${name}:`, `/home/${name}/.ssh`])
  return { name, home: `/home/${name}`, uid: Number(execFileSync('id', ['-u', name]).toString()) }
})
const port = await new Promise((resolve) => { const s = createServer().listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => resolve(p)) }) })
mkdirSync('/run/sshd', { recursive: true })
writeFileSync(join(dir, 'cfg'), [`ListenAddress 127.0.0.1`, `Port ${port}`, `HostKey ${dir}/host`, `PidFile ${dir}/pid`, 'PubkeyAuthentication yes',
  'PasswordAuthentication no', 'KbdInteractiveAuthentication no', 'UsePAM no', 'Subsystem sftp internal-sftp', 'MaxSessions 64', 'MaxStartups 200:30:400', 'LogLevel ERROR', ''].join('\n'))
const hostPub = readFileSync(join(dir, 'host.pub'), 'utf8').trim().split(/\s+/)
writeFileSync(join(dir, 'known_hosts'), `[127.0.0.1]:${port} ${hostPub[0]} ${hostPub[1]}\n`)
const sshd = spawn('/usr/sbin/sshd', ['-D', '-e', '-f', join(dir, 'cfg')], { stdio: 'ignore' })
await new Promise((r) => setTimeout(r, 300))
const spec = (u, r) => ({ url: `ssh://${u.name}@127.0.0.1:${port}${r}`, identity: join(dir, 'id'), knownHosts: join(dir, 'known_hosts') })

const stats = (xs) => { const s = [...xs].sort((a, b) => a - b); return { median: s[Math.floor(s.length / 2)], min: s[0], max: s[s.length - 1] } }
const time = async (fn) => { const t = process.hrtime.bigint(); await fn(); return Number(process.hrtime.bigint() - t) / 1e6 }
const rows = []
const measure = async (name, fn, n = runs) => {
  await fn()
  const xs = []
  for (let i = 0; i < n; i++) xs.push(await time(fn))
  rows.push({ name, ...stats(xs), n })
}

try {
  // --- per-operation cost --------------------------------------------------------------
  const u = users[0]
  const ws = join(u.home, 'ws'); mkdirSync(ws); execFileSync('chown', [`${u.name}:`, ws])
  const policy = { mode: 'workspace-write', cwd: ws, writableRoots: [ws, join(dir, 'tmp')], tmpRoot: join(dir, 'tmp'), network: true }
  mkdirSync(join(dir, 'tmp'))
  await measure('ssh: connect + check a world (key, host key, SFTP, root)', async () => { const w = await SshWorld.open(new Context(), spec(u, ws), 'bench-open'); await w.close() }, Math.min(runs, 10))
  const world = await SshWorld.open(new Context(), spec(u, ws), 'bench')
  const local = new Context()
  await local.plugin(await import(join(root, 'packages/exec/dist/plugins/subprocess.js')), { killGraceMs: 2000, shPath: '/bin/sh' })
  await local.plugin(await import(join(root, 'packages/exec/dist/plugins/fs.js')), {})
  await measure('ssh: subprocess.run(true)', () => world.subprocess.run(['true'], { cwd: ws }))
  await measure('local: subprocess.run(true)', () => local.subprocess.run(['true'], { cwd: ws }))
  await measure('ssh: shell.run("true") (bash tool body)', () => world.shell.run('true', { policy }))
  await measure('ssh: fs.write 1 KiB (temp + fsync + posix-rename)', () => world.fs.write(join(ws, 'f.txt'), 'x'.repeat(1024), policy))
  await measure('local: fs.write 1 KiB', () => local.fs.write(join(ws, 'g.txt'), 'x'.repeat(1024), policy))
  await measure('ssh: fs.readFile 1 KiB', () => world.fs.readFile(join(ws, 'f.txt')))
  await measure('ssh: fs.stat', () => world.fs.stat(join(ws, 'f.txt')))
  await world.close()
  await local.fiber.dispose()

  // --- dsh batch: 32 tasks × 3 steps over 4 hosts ----------------------------------------
  const model = await startMockModel()
  const batchRows = []
  for (const parallel of [1, 8, 32]) {
    const work = mkdtempSync(join(tmpdir(), 'dsh-bench-batch-'))
    const hosts = users.map((h) => { const r = join(h.home, `b${parallel}-${Date.now()}`); mkdirSync(r); execFileSync('chown', [`${h.name}:`, r]); return `- url: ssh://${h.name}@127.0.0.1:${port}${r}\n  slots: 8\n` })
    writeFileSync(join(work, 'hosts.yaml'), hosts.join(''))
    writeFileSync(join(work, 'tasks.jsonl'), Array.from({ length: 32 }, (_, i) => JSON.stringify({ id: `t${i}`, prompt: `task ${i}` })).join('\n') + '\n')
    // steps interleave across concurrent tasks; each task ends at its first answer, so the
    // script is 32 × [bash, bash, answer] and every task takes 1–3 steps (3 at --parallel 1)
    model.setScript(Array.from({ length: 32 }, () => [
      { toolCalls: [{ name: 'bash', arguments: { command: 'echo step >> log.txt' } }] },
      { toolCalls: [{ name: 'bash', arguments: { command: 'wc -l log.txt' } }] },
      { text: 'done' },
    ]).flat())
    model.requests.length = 0
    const t = Date.now()
    const code = await new Promise((resolve) => {
      const child = spawn(join(root, 'packages/cli/bin/dsh.js'), ['batch', 'tasks.jsonl', '--hosts', 'hosts.yaml', '--parallel', String(parallel),
        '--identity', join(dir, 'id'), '--known-hosts', join(dir, 'known_hosts')], {
        cwd: work, env: { PATH: process.env.PATH, HOME: process.env.HOME, DSH_HOME: join(work, 'home'), DEEPSEEK_BASE_URL: model.url, DEEPSEEK_API_KEY: 'bench' }, stdio: 'ignore',
      })
      child.on('exit', (c) => resolve(c))
    })
    const wall = Date.now() - t
    batchRows.push({ parallel, wall, code, requests: model.requests.length })
    rmSync(work, { recursive: true, force: true })
  }
  await model.close()

  const pad = (s, n) => String(s).padEnd(n)
  console.log(`\nssh world on loopback (${runs} runs; ms)`)
  console.log(pad('operation', 58) + pad('median', 9) + 'min–max')
  for (const r of rows) console.log(pad(r.name, 58) + pad(r.median.toFixed(2), 9) + `${r.min.toFixed(2)}–${r.max.toFixed(2)}`)
  console.log('\ndsh batch: 32 tasks × up to 3 steps, 4 hosts × 8 slots (one run each)')
  console.log(pad('--parallel', 12) + pad('wall ms', 10) + pad('tasks/min', 11) + pad('model requests', 16) + 'exit')
  for (const b of batchRows) console.log(pad(b.parallel, 12) + pad(b.wall, 10) + pad((32 / (b.wall / 60000)).toFixed(0), 11) + pad(b.requests, 16) + b.code)
} finally {
  sshd.kill('SIGTERM')
  await new Promise((r) => sshd.once('exit', r))
  for (const u of users) {
    for (const p of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
      try { if (new RegExp(`^Uid:\\s+${u.uid}\\s`, 'm').test(readFileSync(`/proc/${p}/status`, 'utf8'))) process.kill(Number(p), 'SIGKILL') } catch { /* gone */ }
    }
    try { execFileSync('userdel', ['-r', '-f', u.name], { stdio: 'ignore' }) } catch { /* gone */ }
  }
  rmSync(dir, { recursive: true, force: true })
}
