import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs'
import { basename, join } from 'node:path'
import { type Script } from '@dsh/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CAN_RUN_SSHD, keygen, processesOf, startSshd, type Sshd } from '../../packages/world-ssh/test/sshd.js'
import { collect, tempDir } from './helpers/dsh.js'
import { useDshWorld } from './helpers/world.js'

// the workspace is the directory dsh batch runs in (the task list, the results, local task folders)
const world = useDshWorld({ logsCheck: false })
const batch = (args: string[]) => world.run(['batch', ...args])
const tasksOf = (n: number, prefix = 't') => Array.from({ length: n }, (_, i) => JSON.stringify({ id: `${prefix}${i}`, prompt: `task ${i}` })).join('\n') + '\n'
/** Per task: one bash call writing marker.txt in its workspace, then an answer (steps interleave across tasks). */
const scriptFor = (n: number): Script => Array.from({ length: n }, () => [
  { toolCalls: [{ name: 'bash', arguments: { command: 'id -un > marker.txt' } }] }, { text: 'done' },
]).flat() as Script
const resultsOf = (file: string) => readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, any>).filter((r) => r.id)

describe('dsh batch (local worlds)', () => {
  it('runs every task in its own directory, appends results, and a re-run does nothing', async () => {
    writeFileSync(join(world.workspace, 'tasks.jsonl'), tasksOf(3))
    world.model.setScript(scriptFor(3))
    const first = await batch(['tasks.jsonl', '--parallel', '3'])
    expect(first.stderr).toContain('batch: all task(s) completed')
    expect(first.code).toBe(0)
    const results = resultsOf(join(world.workspace, 'tasks.results.jsonl'))
    expect(results.map((r) => r.id).sort()).toEqual(['t0', 't1', 't2'])
    for (const r of results) expect(r).toMatchObject({ reason: 'completed', text: 'done', host: null, sessionId: expect.any(String), wallMs: expect.any(Number) })
    expect(readdirSync(world.workspace).sort()).toEqual(['t0', 't1', 't2', 'tasks.jsonl', 'tasks.results.jsonl'])
    const requests = world.model.requests.length
    const again = await batch(['tasks.jsonl'])
    expect(again.code).toBe(0)
    expect(again.stderr).toContain('3 task(s) already completed')
    expect(world.model.requests.length).toBe(requests)
  })

  it('SIGTERM stops a local batch with exit 143 (128 + 15, not the 130 of Ctrl-C); the task is left to resume', async () => {
    writeFileSync(join(world.workspace, 'tasks.jsonl'), tasksOf(1, 'term'))
    world.model.setScript([{ toolCalls: [{ name: 'bash', arguments: { command: 'echo started > started.txt; sleep 41.5' } }] }])
    const child = world.spawn(['batch', 'tasks.jsonl'])
    const done = collect(child)
    const marker = join(world.workspace, 'term0', 'started.txt')
    for (let i = 0; i < 500 && !existsSync(marker); i++) await new Promise((r) => setTimeout(r, 20))
    expect(existsSync(marker)).toBe(true)
    child.kill('SIGTERM')
    const r = await done
    expect(r.stderr).toContain('batch: interrupted')
    expect(r.code).toBe(143)
    expect(resultsOf(join(world.workspace, 'tasks.results.jsonl'))).toHaveLength(0)
  })

  it('bad input: an invalid line or a duplicate id is named by line, and nothing starts without --keep-going', async () => {
    writeFileSync(join(world.workspace, 'tasks.jsonl'), '{"id":"a","prompt":"x"}\n{"id":"b"}\nnot json\n{"id":"a","prompt":"y"}\n')
    const r = await batch(['tasks.jsonl'])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('line 2: prompt')
    expect(r.stderr).toContain('line 3: not JSON')
    expect(r.stderr).toContain('line 4: duplicate task id "a" (first on line 1)')
    expect(r.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/)
    expect(existsSync(join(world.workspace, 'tasks.results.jsonl'))).toBe(false)
    expect(world.model.requests).toHaveLength(0)
    world.model.setScript([{ text: 'done' }])
    const kept = await batch(['tasks.jsonl', '--keep-going'])
    expect(kept.code).toBe(1) // the bad lines did not complete
    expect(resultsOf(join(world.workspace, 'tasks.results.jsonl')).map((x) => [x.id, x.reason])).toEqual([['a', 'completed']])
  })

  it('a task whose workspace is absolute or climbs out of the current directory is refused before anything starts', async () => {
    const climb = `../${basename(world.workspace)}-climbed`
    const cases: [{ id: string; prompt: string; workspace: string }, string][] = [
      [{ id: 'a', prompt: 'p', workspace: '/etc' }, 'workspace must be a relative path under the current directory, got "/etc"'],
      [{ id: 'b', prompt: 'p', workspace: climb }, `workspace must be a relative path under the current directory, got "${climb}"`],
    ]
    for (const [line, shown] of cases) {
      writeFileSync(join(world.workspace, 'tasks.jsonl'), JSON.stringify(line) + '\n')
      const run = await batch(['tasks.jsonl'])
      expect(run.stderr).toContain(`BATCH_TASKS: task ${line.id}: ${shown}`)
      expect(run.code).toBe(2)
    }
    expect(world.model.requests).toHaveLength(0)
    expect(existsSync(join(world.workspace, climb))).toBe(false)
  })

  it('a results file of another task list is refused; an invalid HOSTS.yaml names the entry', async () => {
    writeFileSync(join(world.workspace, 'tasks.jsonl'), tasksOf(1))
    writeFileSync(join(world.workspace, 'other.results.jsonl'), '{"batch":{"digest":"0123456789abcdef","tasks":5}}\n')
    const r = await batch(['tasks.jsonl', '--out', 'other.results.jsonl'])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('BATCH_RESULTS_MISMATCH')
    writeFileSync(join(world.workspace, 'hosts.yaml'), '- url: ssh://u@127.0.0.1/srv\n- {url: "ssh://u@h/r", slots: 0}\n')
    const h = await batch(['tasks.jsonl', '--hosts', 'hosts.yaml'])
    expect(h.code).toBe(2)
    expect(h.stderr).toMatch(/BATCH_HOSTS: hosts\.yaml: host 2: slots/)
    expect(world.model.requests).toHaveLength(0)
  })
})

describe.skipIf(!CAN_RUN_SSHD)('dsh batch over a pool of hosts (a real sshd, 4 users)', () => {
  let sshd: Sshd
  beforeAll(async () => { sshd = await startSshd(4) })
  afterAll(async () => { await sshd?.stop() })

  const rootOf = (i: number) => {
    const u = sshd.users[i]!
    const root = join(u.home, `pool-${Math.random().toString(36).slice(2, 7)}`)
    mkdirSync(root)
    execFileSync('chown', [`${u.name}:`, root])
    return root
  }

  it('32 tasks over 4 hosts complete with per-task results on the right host, and a re-run does nothing', async () => {
    const roots = [0, 1, 2, 3].map(rootOf)
    writeFileSync(join(world.workspace, 'hosts.yaml'), roots.map((r, i) => `- url: ${sshd.url(sshd.users[i]!, r)}\n  slots: 2\n`).join(''))
    writeFileSync(join(world.workspace, 'tasks.jsonl'), tasksOf(32))
    world.model.setScript(scriptFor(32))
    const r = await batch(['tasks.jsonl', '--hosts', 'hosts.yaml', '--parallel', '8', '--identity', sshd.identity, '--known-hosts', sshd.knownHosts])
    expect(r.stderr).toContain('batch: all task(s) completed')
    expect(r.code).toBe(0)
    const results = resultsOf(join(world.workspace, 'tasks.results.jsonl'))
    expect(results).toHaveLength(32)
    expect(new Set(results.map((x) => x.id)).size).toBe(32)
    const byHost = new Map<string, number>()
    for (const x of results) byHost.set(x.host, (byHost.get(x.host) ?? 0) + 1)
    expect(byHost.size).toBe(4)
    // the world: each marker is in its task's directory on the host that ran it, written by that host's user
    let markers = 0
    for (const x of results) {
      const i = roots.findIndex((root, k) => x.host === sshd.url(sshd.users[k]!, root))
      expect(i).toBeGreaterThanOrEqual(0)
      const f = join(roots[i]!, x.id, 'marker.txt')
      expect(statSync(join(roots[i]!, x.id)).uid).toBe(sshd.users[i]!.uid)
      if (existsSync(f)) {
        markers++
        expect(readFileSync(f, 'utf8')).toBe(`${sshd.users[i]!.name}\n`)
        expect(statSync(f).uid).toBe(sshd.users[i]!.uid)
      }
    }
    expect(markers).toBeGreaterThan(0)
    expect(existsSync(join(world.workspace, 't0'))).toBe(false)
    const requests = world.model.requests.length
    const again = await batch(['tasks.jsonl', '--hosts', 'hosts.yaml', '--identity', sshd.identity, '--known-hosts', sshd.knownHosts])
    expect(again.code).toBe(0)
    expect(world.model.requests.length).toBe(requests)
  })

  it('a host whose key changed fails its task with a typed reason and leaves the pool; the rest complete', async () => {
    const roots = [0, 1].map(rootOf)
    const other = join(tempDir('dsh-key-'), 'k')
    keygen(other)
    const pub = readFileSync(`${other}.pub`, 'utf8').trim().split(/\s+/)
    const badKnown = join(world.workspace, 'bad_known_hosts')
    writeFileSync(badKnown, `[127.0.0.1]:${sshd.port} ${pub[0]} ${pub[1]}\n`)
    writeFileSync(join(world.workspace, 'hosts.yaml'), `- url: ${sshd.url(sshd.users[0]!, roots[0]!)}\n  knownHosts: ${badKnown}\n- url: ${sshd.url(sshd.users[1]!, roots[1]!)}\n`)
    writeFileSync(join(world.workspace, 'tasks.jsonl'), tasksOf(4))
    world.model.setScript(scriptFor(4))
    const r = await batch(['tasks.jsonl', '--hosts', 'hosts.yaml', '--parallel', '2', '--identity', sshd.identity, '--known-hosts', sshd.knownHosts])
    expect(r.code).toBe(1)
    const results = resultsOf(join(world.workspace, 'tasks.results.jsonl'))
    const failed = results.filter((x) => x.reason !== 'completed')
    expect(failed).toHaveLength(1)
    expect(failed[0]).toMatchObject({ reason: 'host-failed', error: { code: 'WORLD_HOST_KEY_MISMATCH' } })
    expect(results.filter((x) => x.reason === 'completed')).toHaveLength(3)
    expect(results.filter((x) => x.reason === 'completed').every((x) => x.host?.includes(sshd.users[1]!.name))).toBe(true)
  })

  it('a host whose connection drops mid-task fails that task and leaves the pool; its remote process is reaped', async () => {
    const roots = [0, 1].map(rootOf)
    writeFileSync(join(world.workspace, 'hosts.yaml'), roots.map((r, i) => `- url: ${sshd.url(sshd.users[i]!, r)}\n`).join(''))
    writeFileSync(join(world.workspace, 'tasks.jsonl'), tasksOf(3, 'd'))
    // on the host that will drop, the command outlives the test unless it is reaped
    const command = `case $(id -un) in ${sshd.users[0]!.name}) sleep 44.5;; *) sleep 4.5;; esac`
    world.model.setScript([
      { toolCalls: [{ name: 'bash', arguments: { command } }] }, { toolCalls: [{ name: 'bash', arguments: { command } }] },
      { text: 'done' }, { text: 'done' }, { text: 'done' }, { text: 'done' },
    ])
    const child = world.spawn(['batch', 'tasks.jsonl', '--hosts', 'hosts.yaml', '--parallel', '2', '--identity', sshd.identity, '--known-hosts', sshd.knownHosts])
    const done = collect(child)
    const sleepingOn = (i: number) => processesOf(sshd.users[i]!.uid).filter((p) => p.cmd === (i === 0 ? 'sleep 44.5' : 'sleep 4.5')).length
    for (let i = 0; i < 500 && (sleepingOn(0) < 1 || sleepingOn(1) < 1); i++) await new Promise((r) => setTimeout(r, 20))
    expect([sleepingOn(0), sleepingOn(1)]).toEqual([1, 1])
    for (const pid of sshd.sessionPids(sshd.users[0]!)) process.kill(pid, 'SIGKILL')
    const r = await done
    expect(r.code).toBe(1)
    const results = resultsOf(join(world.workspace, 'tasks.results.jsonl'))
    const failed = results.filter((x) => x.reason !== 'completed')
    expect(failed).toHaveLength(1)
    expect(failed[0]).toMatchObject({ reason: 'host-failed', host: sshd.url(sshd.users[0]!, roots[0]!), error: { code: 'WORLD_CONNECTION_LOST' } })
    const completed = results.filter((x) => x.reason === 'completed')
    expect(completed).toHaveLength(2)
    expect(completed.every((x) => x.host === sshd.url(sshd.users[1]!, roots[1]!))).toBe(true)
    expect(sleepingOn(0)).toBe(0) // reaped when the failed task's world closed
  })

  it('Ctrl-C cancels every running task, kills their remote processes, and the next run resumes them', async () => {
    const roots = [0, 1].map(rootOf)
    writeFileSync(join(world.workspace, 'hosts.yaml'), roots.map((r, i) => `- url: ${sshd.url(sshd.users[i]!, r)}\n`).join(''))
    writeFileSync(join(world.workspace, 'tasks.jsonl'), tasksOf(2, 'c'))
    world.model.setScript([
      { toolCalls: [{ name: 'bash', arguments: { command: 'sleep 43.5' } }] }, { toolCalls: [{ name: 'bash', arguments: { command: 'sleep 43.5' } }] },
    ])
    const child = world.spawn(['batch', 'tasks.jsonl', '--hosts', 'hosts.yaml', '--parallel', '2', '--identity', sshd.identity, '--known-hosts', sshd.knownHosts])
    const done = collect(child)
    const sleeping = () => sshd.users.slice(0, 2).flatMap((u) => processesOf(u.uid)).filter((p) => p.cmd === 'sleep 43.5').length
    for (let i = 0; i < 500 && sleeping() < 2; i++) await new Promise((r) => setTimeout(r, 20))
    expect(sleeping()).toBe(2)
    child.kill('SIGINT')
    const r = await done
    expect(r.code).toBe(130)
    for (let i = 0; i < 200 && sleeping() > 0; i++) await new Promise((r2) => setTimeout(r2, 20))
    expect(sleeping()).toBe(0)
    expect(resultsOf(join(world.workspace, 'tasks.results.jsonl'))).toHaveLength(0)
    const starts = readFileSync(join(world.workspace, 'tasks.results.jsonl'), 'utf8').split('\n').filter((l) => l.includes('"start"')).map((l) => JSON.parse(l).start.sessionId as string)
    expect(starts).toHaveLength(2)
    world.model.setScript([{ text: 'resumed' }, { text: 'resumed' }])
    const again = await batch(['tasks.jsonl', '--hosts', 'hosts.yaml', '--identity', sshd.identity, '--known-hosts', sshd.knownHosts])
    expect(again.code).toBe(0)
    const results = resultsOf(join(world.workspace, 'tasks.results.jsonl'))
    expect(results.map((x) => x.sessionId).sort()).toEqual([...starts].sort())
    expect(results.every((x) => x.reason === 'completed' && x.text === 'resumed')).toBe(true)
  })
})
