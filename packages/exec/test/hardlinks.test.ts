import { createHash } from 'node:crypto'
import { linkSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import type { Context } from '@deepseek-ai/cordis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { outsideLinks, scanLinkedFiles } from '../src/sandbox/hardlinks.js'
import { planLinkMounts } from '../src/sandbox/link-plan.js'
import { cleanupDirs, execTree, policyFor, tempDir } from './helpers.js'

// Issue 12 item 6a: a pre-existing hard link in a writable root to a file outside it.
let root: Context
let ws: string
let tmp: string
let victim: string

const hash = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex')

beforeAll(async () => {
  ws = tempDir('ws')
  tmp = tempDir('tmproot')
  victim = path.join(tempDir('outside'), 'victim.txt')
  writeFileSync(victim, 'precious\n')
  mkdirSync(path.join(ws, 'deep', 'er'), { recursive: true })
  linkSync(victim, path.join(ws, 'deep', 'er', 'innocent.txt'))
  writeFileSync(path.join(ws, 'a.txt'), 'a\n')
  linkSync(path.join(ws, 'a.txt'), path.join(ws, 'a-twin.txt'))
  root = await execTree()
})
afterAll(cleanupDirs)

async function sh(script: string) {
  let output = ''
  const argv = await root.sandbox.wrap(['bash', '-c', script], policyFor('workspace-write', ws, tmp))
  const result = await root.subprocess.run(argv, { cwd: ws, onData: (c) => { output += c.toString() } })
  return { code: result.exitCode, output }
}

describe('hard links out of the writable roots', () => {
  it('a write through the link fails and the outside file keeps its hash and inode; links wholly inside stay writable', async () => {
    const before = { hash: hash(victim), ino: statSync(victim).ino, nlink: statSync(victim).nlink }
    const r = await sh('echo pwned >> deep/er/innocent.txt; echo pwned > deep/er/innocent.txt; truncate -s0 deep/er/innocent.txt; echo twin >> a-twin.txt; echo new > new.txt')
    expect(r.output).toContain('Read-only file system')
    expect({ hash: hash(victim), ino: statSync(victim).ino, nlink: statSync(victim).nlink }).toEqual(before)
    expect(readFileSync(path.join(ws, 'a.txt'), 'utf8')).toBe('a\ntwin\n')
    expect(readFileSync(path.join(ws, 'new.txt'), 'utf8')).toBe('new\n')
    // reading it is still fine
    expect((await sh('cat deep/er/innocent.txt')).output).toBe('precious\n')
  })

  it.each(['find', 'the walk'])('the scan (by %s) finds each linked file once; only links with an outside twin are confined', async (by) => {
    const scan = await scanLinkedFiles(ws, by === 'find' ? root.subprocess : undefined)
    expect(scan.map((f) => path.relative(ws, f.path)).sort()).toEqual(['a-twin.txt', 'a.txt', 'deep/er/innocent.txt'])
    const st = statSync(victim)
    expect(scan.find((f) => f.path.endsWith('innocent.txt'))).toEqual({ path: path.join(ws, 'deep', 'er', 'innocent.txt'), inode: `${st.dev}:${st.ino}`, nlink: 2 })
    expect(outsideLinks([scan]).map((f) => path.relative(ws, f.path))).toEqual(['deep/er/innocent.txt'])
  })

  it('too many outside links to confine one by one is SANDBOX_HARDLINKS with a reason and a way out', async () => {
    const scan = await scanLinkedFiles(ws)
    await expect(planLinkMounts(outsideLinks([scan]), [ws], { limit: 0 })).rejects.toThrow(expect.objectContaining({ code: 'SANDBOX_HARDLINKS', hint: expect.stringContaining('--no-hardlinks') }))
  })
})
