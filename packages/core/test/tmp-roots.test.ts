import { chmodSync, chownSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { isDshError } from '@dsh/protocol'
import { ensureSessionTmp, sessionTmpPath, userTmpBase } from '../src/home/index.js'

// Issue 12 item 6c: temp roots are per user, 0700, and checked before use.
let saved: string | undefined
let tmp: string

beforeEach(() => {
  saved = process.env.TMPDIR
  tmp = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-tmproots-')))
  process.env.TMPDIR = tmp
})
afterEach(() => {
  if (saved === undefined) delete process.env.TMPDIR
  else process.env.TMPDIR = saved
  rmSync(tmp, { recursive: true, force: true })
})

function code(fn: () => unknown): string {
  try {
    fn()
    return 'ok'
  } catch (error) {
    return isDshError(error) ? `${error.code}: ${error.message}` : String(error)
  }
}

describe('per-user temp roots', () => {
  it('the base is <tmpdir>/dsh-<uid>, it and each session folder 0700; a shared /tmp/dsh is never used', () => {
    expect(userTmpBase()).toBe(join(tmp, `dsh-${process.getuid!()}`))
    const dir = ensureSessionTmp('s1')
    expect(dir).toBe(sessionTmpPath('s1'))
    expect(lstatSync(userTmpBase()).mode & 0o777).toBe(0o700)
    expect(lstatSync(dir).mode & 0o777).toBe(0o700)
    expect(existsSync(join(tmp, 'dsh'))).toBe(false)
  })

  it('a root-made 0755 /tmp/dsh of the old layout is no obstacle, and our own base opened up to 0755 is closed again', () => {
    mkdirSync(join(tmp, 'dsh'), { mode: 0o755 })
    mkdirSync(userTmpBase(), { mode: 0o755 })
    chmodSync(userTmpBase(), 0o755)
    ensureSessionTmp('s2')
    expect(lstatSync(userTmpBase()).mode & 0o777).toBe(0o700)
  })

  it('a base pre-created as a symlink by someone else is refused, never followed', () => {
    const bait = join(tmp, 'attacker')
    mkdirSync(bait)
    symlinkSync(bait, userTmpBase())
    expect(code(() => ensureSessionTmp('s3'))).toBe(`TMP_ROOT_UNSAFE: the temp folder ${userTmpBase()} is a symbolic link; dsh will not use it`)
    expect(readdirSync(bait)).toEqual([])
  })

  it('a session folder swapped for a symlink is refused', () => {
    ensureSessionTmp()
    symlinkSync(tmp, sessionTmpPath('s4'))
    expect(code(() => ensureSessionTmp('s4'))).toMatch(/^TMP_ROOT_UNSAFE: .* is a symbolic link/)
  })

  it.runIf(process.getuid!() === 0)('a base owned by another user is refused (as root: chown to nobody)', () => {
    mkdirSync(userTmpBase(), { mode: 0o700 })
    chownSync(userTmpBase(), 65534, 65534)
    expect(code(() => ensureSessionTmp('s5'))).toBe(`TMP_ROOT_UNSAFE: the temp folder ${userTmpBase()} is owned by uid 65534, not by you (uid 0); dsh will not use it`)
  })
})
