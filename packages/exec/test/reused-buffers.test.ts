import { readFileSync } from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import fc from 'fast-check'
import { afterAll, describe, expect, it } from 'vitest'
import { DenialDetector } from '../src/shell/local.js'
import { OutputSink } from '../src/shell/output.js'
import { ChannelFactory } from '../src/subprocess/channel.js'
import { cleanupDirs, execTree, tempDir } from './helpers.js'

// Decision 0070: a command's output is read into one reused buffer, so every consumer
// that keeps bytes must copy them. Each test overwrites the buffer after every write.
afterAll(cleanupDirs)

/** Feeds `text` in pieces through ONE buffer that is scribbled over after each write. */
function feedReused(text: string, cuts: number[], write: (chunk: Buffer) => void): void {
  const bytes = Buffer.from(text)
  const shared = Buffer.alloc(bytes.length + 1)
  let at = 0
  for (const cut of [...cuts.filter((c) => c > 0 && c < bytes.length).sort((a, b) => a - b), bytes.length]) {
    if (cut <= at) continue
    const view = shared.subarray(0, cut - at)
    bytes.copy(view, 0, at, cut)
    write(view)
    view.fill(0x58) // 'X': what a reused buffer holds next
    at = cut
  }
}

describe('OutputSink with a reused chunk buffer', () => {
  it('keeps the exact tail and spills the exact stream, for any cut points (property)', () => {
    const dir = tempDir('sink-reuse')
    let n = 0
    fc.assert(fc.property(fc.string({ maxLength: 400 }), fc.array(fc.nat(400), { maxLength: 12 }), (body, cuts) => {
      const text = `${body}\nend\n`
      const file = path.join(dir, `out-${n++}.log`)
      const sink = new OutputSink({ maxBytes: 64, maxLines: 1000 }, () => file)
      feedReused(text, cuts, (c) => sink.write(c))
      const { output, truncation } = sink.finish()
      if (!truncation) {
        expect(output).toBe(text)
      } else {
        expect(readFileSync(file, 'utf8')).toBe(text)
        expect(Buffer.from(text).subarray(-64).toString('utf8').endsWith(output)).toBe(true)
        expect(output.endsWith('end\n')).toBe(true)
      }
    }), { numRuns: 300 })
  })
})

describe('DenialDetector', () => {
  const phrase = "touch: cannot touch '/x': Read-only file system\n"
  it('finds the phrase split at every byte, in a reused buffer', () => {
    for (let cut = 0; cut <= phrase.length; cut++) {
      const d = new DenialDetector(true)
      feedReused(phrase, [cut], (c) => d.feed(c))
      expect(d.found, `cut at ${cut}`).toBe(true)
    }
  })
  it('finds it fed one byte at a time, and never in text without it', () => {
    const one = new DenialDetector(true)
    feedReused(phrase, Array.from({ length: phrase.length }, (_, i) => i), (c) => one.feed(c))
    expect(one.found).toBe(true)
    const none = new DenialDetector(true)
    feedReused('Read-only file syste\nm Read-only file\n', [5, 19, 21], (c) => none.feed(c))
    expect(none.found).toBe(false)
  })
})

describe('output channels', () => {
  it('a connection without the token is dropped; the next command still gets its own output', async () => {
    const factory = new ChannelFactory()
    const channel = await factory.take()
    const sockDir = readFileSync('/proc/self/net/unix', 'utf8').split('\n').map((l) => l.split(' ').at(-1)!).find((p) => /dsh-out-[^/]+\/channel\.sock$/.test(p))!
    // a stranger connects and sends garbage (a wrong token): it is closed, nothing pairs with it
    const stranger = net.connect(sockDir)
    const closed = new Promise((r) => stranger.once('close', r))
    stranger.on('error', () => {})
    stranger.write('x'.repeat(32))
    await closed
    let got = ''
    channel.onChunk = (c) => { got += c.toString() }
    channel.childEnd!.write('hello')
    channel.childEnd!.end()
    await new Promise((r) => channel.reader.once('close', r))
    expect(got).toBe('hello')
    factory.close()
  })

  it('the shell seam returns the whole output of many commands in parallel (each its own channel)', async () => {
    const tree = await execTree()
    {
      const ws = tempDir('chan-ws')
      const policy = { mode: 'danger-full-access' as const, cwd: ws, writableRoots: [ws], tmpRoot: tempDir('chan-tmp'), network: true }
      const results = await Promise.all(Array.from({ length: 8 }, (_, i) => tree.shell.run(`seq ${i * 1000} ${i * 1000 + 2000}`, { policy })))
      results.forEach((r, i) => {
        const want = Array.from({ length: 2001 }, (_, k) => String(i * 1000 + k)).join('\n') + '\n'
        expect(r.truncation?.totalBytes ?? r.output.length).toBe(want.length)
        expect(want.endsWith(r.output)).toBe(true)
      })
    }
  })
})

describe('the spare channel', () => {
  it('does not keep a process alive: a script that ran one command exits by itself', async () => {
    const { spawnSync } = await import('node:child_process')
    const script = `
      import { Context } from '@deepseek-ai/cordis'
      import * as sp from './packages/exec/dist/plugins/subprocess.js'
      const ctx = new Context()
      await ctx.plugin(sp, sp.Config.parse({}))
      const r = await ctx.subprocess.run(['echo', 'hi'], { cwd: '/' })
      console.log('ran', r.exitCode)`
    const root = path.resolve(import.meta.dirname, '..', '..', '..')
    // the built package (npm test builds first): a plain node process, as dsh runs
    const out = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: root, encoding: 'utf8', timeout: 15_000 })
    expect(out.stderr).toBe('')
    expect(out.stdout).toBe('ran 0\n')
    expect(out.signal).toBeNull()
  })
})
