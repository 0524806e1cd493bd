// dsh web figures: process start → page interactive (the New session form rendered in
// Chromium, the token exchanged), and the first load's JS + CSS as sent compressed.
// Needs `npm run build` and /usr/bin/chromium. Usage: node scripts/bench-web.mjs [runs]
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium } from 'playwright-core'

const root = new URL('..', import.meta.url).pathname
const runs = Number(process.argv[2] ?? 7)
const bin = join(root, 'node_modules', '.bin', 'dsh')

function start(home, cwd) {
  const env = { ...process.env, DSH_HOME: home, DEEPSEEK_API_KEY: 'bench', DEEPSEEK_BASE_URL: 'http://127.0.0.1:9' }
  const child = spawn(bin, ['web', '--port', '0', '--no-open'], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] })
  return new Promise((resolve, reject) => {
    let out = ''
    child.on('exit', (code) => reject(new Error(`dsh web exited ${code}`)))
    child.stdout.setEncoding('utf8').on('data', (d) => {
      out += d
      const m = /^dsh web: (\S+)\n/.exec(out)
      if (m) resolve({ child, url: m[1] })
    })
  })
}

const stats = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  return { median: s[Math.floor(s.length / 2)], min: s[0], max: s.at(-1) }
}

const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'] })
const interactive = []
const listening = []
let firstLoad = null
try {
  for (let i = 0; i < runs; i++) {
    const home = mkdtempSync(join(tmpdir(), 'dsh-bench-web-'))
    const t0 = performance.now()
    const { child, url } = await start(home, home)
    const t1 = performance.now()
    const context = await browser.newContext()
    const page = await context.newPage()
    const sizes = new Map()
    page.on('response', async (r) => {
      const u = new URL(r.url())
      if (!/\.(js|css)$/.test(u.pathname)) return
      const h = await r.allHeaders()
      sizes.set(u.pathname, { encoding: h['content-encoding'] ?? 'identity', bytes: Number(h['content-length'] ?? 0) })
    })
    await page.goto(url)
    await page.getByTestId('create-session').waitFor()
    const t2 = performance.now()
    listening.push(t1 - t0)
    interactive.push(t2 - t0)
    firstLoad ??= sizes
    await context.close()
    child.kill('SIGINT')
    await new Promise((r) => child.once('exit', r))
  }
} finally {
  await browser.close()
}

const manifest = JSON.parse(readFileSync(join(root, 'packages/web/dist/ui/manifest.json'), 'utf8'))
const row = (name, s, unit) => console.log(`${name.padEnd(40)} ${String(Math.round(s.median)).padStart(8)} ${unit}  (min ${Math.round(s.min)}, max ${Math.round(s.max)}, n=${runs})`)
console.log('dsh web')
row('process start → URL printed', stats(listening), 'ms')
row('process start → page interactive', stats(interactive), 'ms')
let total = 0
for (const [path, { encoding, bytes }] of firstLoad) {
  total += bytes
  console.log(`${('first load ' + path).padEnd(40)} ${String(bytes).padStart(8)} B  (${encoding})`)
}
console.log(`${'first load JS + CSS, compressed'.padEnd(40)} ${String(total).padStart(8)} B  (${(total / 1024).toFixed(1)} KiB; budget 250 KiB; ${manifest.files.length} files)`)
