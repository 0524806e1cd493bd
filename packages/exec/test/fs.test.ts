import { chmodSync, existsSync, linkSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import type { Context } from '@deepseek-ai/cordis'
import { isDshError } from '@dsh/protocol'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { cleanupDirs, execTree, policyFor, tempDir } from './helpers.js'

let root: Context
let ws: string
let outside: string
let tmp: string

beforeAll(async () => { root = await execTree() })
afterAll(cleanupDirs)
beforeEach(() => {
  ws = tempDir('ws')
  outside = tempDir('outside')
  tmp = tempDir('tmproot')
})

async function denied(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(() => undefined, (e: unknown) => e)
  if (!isDshError(error, 'PATH_DENIED')) throw new Error(`expected PATH_DENIED, got ${String(error)}`)
  return error.message
}

describe('ctx.fs writes', () => {
  it('a write or mkdir under /proc/self (danger-full-access) fails instead of hanging: Node\'s recursive mkdir never returns there', async () => {
    const policy = policyFor('danger-full-access', ws, tmp)
    // /proc/self/cwd/.. resolves lexically to /proc/self, where no directory can be made
    const write = await root.fs.write('/proc/self/cwd/../outside/canary.txt', 'x', policy).then(() => 'written', (e: unknown) => e)
    expect(isDshError(write)).toBe(true)
    const mkdir = await root.fs.mkdir('/proc/self/a/b/c', policy).then(() => 'made', (e: unknown) => e)
    expect(isDshError(mkdir)).toBe(true)
    // and ordinary nested creation still works, twice (the second finds every level)
    await root.fs.mkdir(path.join(ws, 'p/q/r'), policy)
    await root.fs.mkdir(path.join(ws, 'p/q/r'), policy)
    expect(statSync(path.join(ws, 'p/q/r')).isDirectory()).toBe(true)
    writeFileSync(path.join(ws, 'plain'), '')
    expect(isDshError(await root.fs.mkdir(path.join(ws, 'plain/sub'), policy).then(() => 'made', (e: unknown) => e))).toBe(true)
  }, 10_000)

  it('writes inside the workspace, creating parents, and stats the result', async () => {
    const policy = policyFor('workspace-write', ws, tmp)
    const stat = await root.fs.write(path.join(ws, 'a/b/c.txt'), 'hello\n', policy)
    expect(readFileSync(path.join(ws, 'a/b/c.txt'), 'utf8')).toBe('hello\n')
    expect(stat).toMatchObject({ type: 'file', size: 6 })
  })

  it('denies `..` escapes and leaves the outside untouched', async () => {
    const policy = policyFor('workspace-write', ws, tmp)
    const target = path.join(ws, '..', path.basename(outside), 'x.txt')
    const message = await denied(root.fs.write(target, 'x', policy))
    expect(message).toContain('outside the writable roots')
    expect(existsSync(path.join(outside, 'x.txt'))).toBe(false)
  })

  it('denies writes through a symlinked directory or file that points outside', async () => {
    const policy = policyFor('workspace-write', ws, tmp)
    symlinkSync(outside, path.join(ws, 'dirlink'))
    writeFileSync(path.join(outside, 'victim.txt'), 'original')
    symlinkSync(path.join(outside, 'victim.txt'), path.join(ws, 'filelink'))
    symlinkSync(path.join(outside, 'nothing-yet.txt'), path.join(ws, 'dangling'))
    expect(await denied(root.fs.write(path.join(ws, 'dirlink/new.txt'), 'x', policy))).toContain(`resolves to ${outside}/new.txt`)
    await denied(root.fs.write(path.join(ws, 'filelink'), 'x', policy))
    await denied(root.fs.write(path.join(ws, 'dangling'), 'x', policy))
    expect(readFileSync(path.join(outside, 'victim.txt'), 'utf8')).toBe('original')
    expect(existsSync(path.join(outside, 'new.txt'))).toBe(false)
    expect(existsSync(path.join(outside, 'nothing-yet.txt'))).toBe(false)
  })

  it('writes the target of a symlink that stays inside, keeping the link', async () => {
    const policy = policyFor('workspace-write', ws, tmp)
    writeFileSync(path.join(ws, 'real.txt'), 'old')
    symlinkSync('real.txt', path.join(ws, 'alias.txt'))
    await root.fs.write(path.join(ws, 'alias.txt'), 'new', policy)
    expect(readFileSync(path.join(ws, 'real.txt'), 'utf8')).toBe('new')
    expect(statSync(path.join(ws, 'alias.txt')).isFile()).toBe(true)
    expect(await root.fs.lstat(path.join(ws, 'alias.txt'))).toMatchObject({ type: 'symlink' })
  })

  it('never writes through a hard link to a file outside the workspace', async () => {
    const policy = policyFor('workspace-write', ws, tmp)
    writeFileSync(path.join(outside, 'secret.txt'), 'outside content')
    linkSync(path.join(outside, 'secret.txt'), path.join(ws, 'hard.txt'))
    await root.fs.write(path.join(ws, 'hard.txt'), 'replaced', policy)
    expect(readFileSync(path.join(outside, 'secret.txt'), 'utf8')).toBe('outside content')
    expect(readFileSync(path.join(ws, 'hard.txt'), 'utf8')).toBe('replaced')
    expect(statSync(path.join(outside, 'secret.txt')).nlink).toBe(1)
  })

  it('keeps the mode of an existing file and leaves no temp file behind', async () => {
    const policy = policyFor('workspace-write', ws, tmp)
    const file = path.join(ws, 'run.sh')
    writeFileSync(file, '#!/bin/sh\n')
    chmodSync(file, 0o751)
    await root.fs.write(file, '#!/bin/sh\necho hi\n', policy)
    expect(statSync(file).mode & 0o7777).toBe(0o751)
    expect((await root.fs.readdir(ws)).map((e) => e.name)).toEqual(['run.sh'])
  })

  it('writes in the temp root and extra roots, nowhere under read-only, anywhere under danger-full-access', async () => {
    const extra = tempDir('extra')
    await root.fs.write(path.join(tmp, 't.txt'), 't', policyFor('workspace-write', ws, tmp))
    await root.fs.write(path.join(extra, 'e.txt'), 'e', policyFor('workspace-write', ws, tmp, [extra]))
    const message = await denied(root.fs.write(path.join(ws, 'r.txt'), 'r', policyFor('read-only', ws, tmp)))
    expect(message).toContain('read-only mode')
    await denied(root.fs.mkdir(path.join(ws, 'd'), policyFor('read-only', ws, tmp)))
    await root.fs.write(path.join(outside, 'd.txt'), 'd', policyFor('danger-full-access', ws, tmp))
    expect([existsSync(path.join(tmp, 't.txt')), existsSync(path.join(extra, 'e.txt')), existsSync(path.join(ws, 'r.txt')),
      existsSync(path.join(ws, 'd')), readFileSync(path.join(outside, 'd.txt'), 'utf8')]).toEqual([true, true, false, false, 'd'])
  })

  it('rejects relative paths and reports missing files with stable codes', async () => {
    const relative = await root.fs.readFile('a.txt').then(() => null, (e: unknown) => e)
    expect(isDshError(relative, 'INVALID_PATH')).toBe(true)
    const missing = await root.fs.readFile(path.join(ws, 'nope')).then(() => null, (e: unknown) => e)
    expect(isDshError(missing, 'FILE_NOT_FOUND')).toBe(true)
    mkdirSync(path.join(ws, 'dir'))
    const dir = await root.fs.readFile(path.join(ws, 'dir')).then(() => null, (e: unknown) => e)
    expect(isDshError(dir, 'IS_DIRECTORY')).toBe(true)
    writeFileSync(path.join(ws, 'big'), 'x'.repeat(100))
    const big = await root.fs.readFile(path.join(ws, 'big'), { maxBytes: 10 }).then(() => null, (e: unknown) => e)
    expect(isDshError(big, 'FILE_TOO_LARGE')).toBe(true)
    expect(await root.fs.stat(path.join(ws, 'nope'))).toBeNull()
    expect(root.fs.resolve(ws, '../x')).toBe(path.join(path.dirname(ws), 'x'))
  })
})
