import { execFileSync } from 'node:child_process'
import { createHmac, randomBytes } from 'node:crypto'
import { isDshError } from '@dsh/protocol'
import { describe, expect, test } from 'vitest'
import { parseHosts, parseTasks, readResults } from '../src/batch/input.js'
import { HostPool } from '../src/batch/pool.js'
import { fingerprint, keysFor, verifyHostKey } from '../src/known-hosts.js'
import { remoteCommand } from '../src/subprocess.js'
import { formatTarget, parseWorldUrl } from '../src/url.js'

const codeOf = (f: () => unknown) => { try { f(); return 'none' } catch (e) { return isDshError(e) ? e.code : String(e) } }

describe('world URLs', () => {
  test('parse and format', () => {
    expect(parseWorldUrl('ssh://agent@10.0.0.5:2222/srv/work/')).toEqual({ user: 'agent', host: '10.0.0.5', port: 2222, root: '/srv/work' })
    expect(parseWorldUrl('ssh://a@h/r')).toMatchObject({ port: 22, root: '/r' })
    expect(formatTarget(parseWorldUrl('ssh://a@h:22/r'))).toBe('ssh://a@h/r')
  })
  test.each([['http://a@h/r'], ['ssh://h/r'], ['ssh://a:pw@h/r'], ['ssh://a@h'], ['ssh://a@h/'], ['not a url'], ['ssh://a@h/r?x=1']])('%s is WORLD_URL', (url) => {
    expect(codeOf(() => parseWorldUrl(url))).toBe('WORLD_URL')
  })
})

describe('known_hosts', () => {
  const blob = randomBytes(51)
  const other = randomBytes(51)
  const b64 = blob.toString('base64')
  test('plain, [host]:port, patterns, negation and hashed entries match; others do not', () => {
    const salt = randomBytes(20)
    const hashed = `|1|${salt.toString('base64')}|${createHmac('sha1', salt).update('[10.1.1.1]:2200').digest('base64')}`
    const text = [`# comment`, `h1,h2 ssh-ed25519 ${b64}`, `[h3]:2222 ssh-ed25519 ${b64}`, `*.lan,!bad.lan ssh-ed25519 ${b64}`, `${hashed} ssh-ed25519 ${b64}`, ''].join('\n')
    expect(keysFor(text, 'h2', 22)).toHaveLength(1)
    expect(keysFor(text, 'h3', 22)).toHaveLength(0)
    expect(keysFor(text, 'h3', 2222)).toHaveLength(1)
    expect(keysFor(text, 'x.lan', 22)).toHaveLength(1)
    expect(keysFor(text, 'bad.lan', 22)).toHaveLength(0)
    expect(keysFor(text, '10.1.1.1', 2200)).toHaveLength(1)
  })
  test('verdicts: pinned ok, mismatch names both fingerprints, @revoked refused, none refused', () => {
    const where = { host: 'h', port: 22, file: 'kh' }
    expect(verifyHostKey(keysFor(`h ssh-ed25519 ${b64}`, 'h', 22), blob, where).ok).toBe(true)
    const mismatch = verifyHostKey(keysFor(`h ssh-ed25519 ${b64}`, 'h', 22), other, where)
    expect(mismatch.ok).toBe(false)
    if (!mismatch.ok) {
      expect(mismatch.error.code).toBe('WORLD_HOST_KEY_MISMATCH')
      expect(mismatch.error.message).toContain(fingerprint(blob))
      expect(mismatch.error.message).toContain(fingerprint(other))
    }
    const revoked = verifyHostKey(keysFor(`@revoked h ssh-ed25519 ${b64}\nh ssh-ed25519 ${b64}`, 'h', 22), blob, where)
    expect(!revoked.ok && revoked.error.code).toBe('WORLD_HOST_KEY_REVOKED')
    const none = verifyHostKey([], blob, where)
    expect(!none.ok && none.error.code).toBe('WORLD_HOST_UNKNOWN')
  })
  test('the fingerprint is the one ssh-keygen prints', () => {
    const dir = execFileSync('mktemp', ['-d']).toString().trim()
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', `${dir}/k`])
    const pub = execFileSync('cat', [`${dir}/k.pub`]).toString().split(' ')[1]!
    const printed = execFileSync('ssh-keygen', ['-l', '-f', `${dir}/k.pub`]).toString().split(' ')[1]
    expect(fingerprint(Buffer.from(pub, 'base64'))).toBe(printed)
    execFileSync('rm', ['-rf', dir])
  })
})

describe('the remote command line', () => {
  test('hostile words stay single words for /bin/sh', () => {
    const argv = ['printf', '%s|', "it's", '$(touch /tmp/pwned)', '`x`', 'a b', '', '\n']
    const cmd = remoteCommand(argv, "/w o'rk", { A: "v'$HOME", 'BAD NAME': 'x' })
    const out = execFileSync('sh', ['-c', cmd.replace(/cd -- "\$1" \|\| exit 126; /, '').replace(/^exec /, '')], { stdio: ['ignore', 'pipe', 'ignore'] }).toString()
    expect(out).toBe("it's|$(touch /tmp/pwned)|`x`|a b||\n|")
    expect(cmd).not.toContain('BAD NAME')
  })
})

describe('batch input', () => {
  test('tasks: line-numbered problems, duplicates, and a digest of the valid list', () => {
    const list = parseTasks('{"id":"a","prompt":"p"}\n\n{"id":"a","prompt":"q"}\n{"id":"../x","prompt":"p"}\n{"id":"b","prompt":"p","extra":1}\n')
    expect(list.tasks.map((t) => t.id)).toEqual(['a'])
    expect(list.problems).toEqual([
      'line 3: duplicate task id "a" (first on line 1)',
      expect.stringMatching(/^line 4: id: /),
      expect.stringMatching(/^line 5: .*extra/),
    ])
    expect(parseTasks('{"id":"a","prompt":"p"}\n').digest).toBe(list.digest)
  })
  test('hosts: each entry checked, slots default 1', () => {
    expect(parseHosts('- url: ssh://u@h/r\n', 'h.yaml')).toEqual([{ url: 'ssh://u@h/r', slots: 1 }])
    expect(codeOf(() => parseHosts('- {url: "ssh://u@h"}\n', 'h.yaml'))).toBe('BATCH_HOSTS')
    expect(codeOf(() => parseHosts('{}', 'h.yaml'))).toBe('BATCH_HOSTS')
    expect(codeOf(() => parseHosts('- url: ssh://u@h/r\n  slot: 2\n', 'h.yaml'))).toBe('BATCH_HOSTS')
  })
  test('results: header checked, last result wins, starts kept, torn line ignored', () => {
    const list = parseTasks('{"id":"a","prompt":"p"}\n{"id":"b","prompt":"p"}\n')
    const text = [JSON.stringify({ batch: { digest: list.digest, tasks: 2 } }), '{"start":{"id":"a","sessionId":"s1"}}',
      '{"id":"a","reason":"error"}', '{"id":"b","reason":"completed"}', '{"id":"a","reason":"compl'].join('\n')
    const state = readResults(text, list, 'r')
    expect([...state.done]).toEqual(['b'])
    expect(state.sessions.get('a')).toBe('s1')
    expect(codeOf(() => readResults('{"batch":{"digest":"x"}}\n', list, 'r'))).toBe('BATCH_RESULTS_MISMATCH')
    expect(codeOf(() => readResults('{"id":"a"}\n', list, 'r'))).toBe('BATCH_RESULTS_MISMATCH')
  })
  test('the pool spreads slots, waits for a free one, and ends waiters when every host failed', async () => {
    const pool = new HostPool([{ url: 'ssh://u@a/r', slots: 1 }, { url: 'ssh://u@b/r', slots: 2 }])
    const s1 = (await pool.acquire())!
    const s2 = (await pool.acquire())!
    const s3 = (await pool.acquire())!
    expect([s1.index, s2.index, s3.index].sort()).toEqual([0, 1, 1])
    const waiting = pool.acquire()
    pool.release(s2)
    const s4 = (await waiting)!
    expect(s4.index).toBe(s2.index)
    const late = pool.acquire()
    pool.fail(s1)
    pool.fail(s3)
    pool.fail(s4)
    expect(await late).toBeUndefined()
    expect(await pool.acquire()).toBeUndefined()
  })
})
