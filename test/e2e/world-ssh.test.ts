import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync, statSync, writeFileSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { startMockModel, type MockModel } from '@dsh/testkit'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { CAN_RUN_SSHD, keygen, startSshd, type Sshd, type TestUser } from '../../packages/world-ssh/test/sshd.js'
import { runDsh, tempDir } from './helpers/dsh.js'
import { readSessionFile, sessionIdOf } from './helpers/session-file.js'

describe.skipIf(!CAN_RUN_SSHD)('headless --world ssh://… (a real sshd on loopback, another user)', () => {
  let model: MockModel
  let sshd: Sshd
  let user: TestUser
  let home: string
  let workspace: string
  let root: string
  const worldArgs = () => ['--world', sshd.url(user, root), '--identity', sshd.identity, '--known-hosts', sshd.knownHosts]
  const headless = (args: string[]) => runDsh(['--profile', 'headless', ...args], {
    cwd: workspace, env: { DSH_HOME: home, DEEPSEEK_BASE_URL: model.url, DEEPSEEK_API_KEY: 'mock-key' },
  })

  beforeAll(async () => {
    model = await startMockModel()
    sshd = await startSshd(1)
    user = sshd.users[0]!
  })
  afterAll(async () => {
    await model?.close()
    await sshd?.stop()
  })
  beforeEach(() => {
    home = tempDir('dsh-home-')
    workspace = tempDir('dsh-ws-')
    root = join(user.home, `root-${Math.random().toString(36).slice(2, 8)}`)
    mkdirSync(root)
    execFileSync('chown', [`${user.name}:`, root])
    model.setScript([])
    model.requests.length = 0
  })

  it('the bash and file tools act on the remote side, and a resume returns to the world', async () => {
    model.setScript([
      { toolCalls: [{ name: 'bash', arguments: { command: 'id -un; pwd' } }] },
      { toolCalls: [{ name: 'write', arguments: { path: 'out/hello.txt', content: 'from dsh\n' } }] },
      { text: 'done', expect: { lastToolResultIncludes: 'out/hello.txt' } },
    ])
    const first = await headless([...worldArgs(), 'whoami and write'])
    expect(first.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/)
    expect(first.code).toBe(0)
    const id = sessionIdOf(first.stderr)
    // the model saw the remote user's name and root
    expect(JSON.stringify(model.requests[1]!.body)).toContain(`${user.name}\\n${root}`)
    // the world, not the report: the file is under the remote root, owned by the remote user; nothing local
    expect(readFileSync(join(root, 'out/hello.txt'), 'utf8')).toBe('from dsh\n')
    expect(statSync(join(root, 'out/hello.txt')).uid).toBe(user.uid)
    expect(existsSync(join(workspace, 'out'))).toBe(false)
    const { header, events } = readSessionFile(home, id)
    expect(header.cwd).toBe(root)
    expect(events.filter((e) => e.type === 'world/select').map((e) => (e.data as { url: string }).url)).toEqual([sshd.url(user, root)])

    model.setScript([
      { toolCalls: [{ name: 'bash', arguments: { command: 'cat out/hello.txt; id -un' } }] },
      { text: 'again', expect: { lastToolResultIncludes: `from dsh\n${user.name}` } },
    ])
    const resumed = await headless(['--resume', id, 'once more'])
    expect(resumed.code).toBe(0)
    expect(resumed.stdout).toBe('again\n')
  })

  it('/status names the world and that the remote machine is the sandbox', async () => {
    const result = await headless([...worldArgs(), '/status'])
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(new RegExp(`world\\s+${sshd.url(user, root).replace(/[.]/g, '\\.')} \\(the remote machine is the sandbox\\)`))
    expect(result.stdout).toMatch(new RegExp(`workspace\\s+${root}`))
  })

  it('a changed host key is refused with both fingerprints, before any model request', async () => {
    const other = join(tempDir('dsh-key-'), 'k')
    keygen(other)
    const pub = readFileSync(`${other}.pub`, 'utf8').trim().split(/\s+/)
    const known = join(home, 'known_hosts')
    writeFileSync(known, `[127.0.0.1]:${sshd.port} ${pub[0]} ${pub[1]}\n`)
    model.setScript([{ text: 'must not be asked' }])
    const result = await headless(['--world', sshd.url(user, root), '--identity', sshd.identity, '--known-hosts', known, 'hello'])
    expect(result.code).toBe(1)
    expect(result.stderr).toContain('WORLD_HOST_KEY_MISMATCH')
    expect(result.stderr).toMatch(/pins SHA256:\S+.*presented SHA256:/)
    expect(result.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/)
    expect(model.requests).toHaveLength(0)
  })

  it('settings.yaml `world` selects the world; a bad key there is named', async () => {
    writeFileSync(join(home, 'settings.yaml'), `version: 1\nworld:\n  url: ${sshd.url(user, root)}\n  identity: ${sshd.identity}\n  knownHosts: ${sshd.knownHosts}\n`)
    model.setScript([{ toolCalls: [{ name: 'bash', arguments: { command: 'id -un' } }] }, { text: 'ok', expect: { lastToolResultIncludes: user.name } }])
    const ok = await headless(['who'])
    expect(ok.code).toBe(0)
    writeFileSync(join(home, 'settings.yaml'), `version: 1\nworld:\n  url: ${sshd.url(user, root)}\n  identiy: /nope\n`)
    const bad = await headless(['who'])
    expect(bad.code).toBe(1)
    expect(bad.stderr).toContain('world')
    expect(bad.stderr).toContain('identiy')
  })

  it('bad input: an unreachable host and a missing identity fail clearly', async () => {
    const unreachable = await headless(['--world', `ssh://${user.name}@127.0.0.1:1${root}`, '--identity', sshd.identity, '--known-hosts', sshd.knownHosts, 'x'])
    expect(unreachable.code).toBe(1)
    expect(unreachable.stderr).toContain('WORLD_UNREACHABLE')
    const noKey = await headless([...worldArgs().slice(0, 2), '--identity', join(home, 'missing-key'), '--known-hosts', sshd.knownHosts, 'x'])
    expect(noKey.code).toBe(1)
    expect(noKey.stderr).toMatch(/WORLD_IDENTITY.*does not exist/)
    expect(model.requests).toHaveLength(0)
  })
})
