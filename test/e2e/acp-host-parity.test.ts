// Issue 9 item 7: headless and ACP take a new session's defaults and creation-time
// refusals from the host's one rule. The same session is driven first through the built
// headless `dsh`, then through `dsh --profile acp` with the ACP SDK client.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { runDsh } from './helpers/dsh.js'
import { rpcError, storedSessions, useAcpSuite } from './helpers/acp.js'
import { readSessionFile, sessionIdOf } from './helpers/session-file.js'

const suite = useAcpSuite()

const headless = (args: string[], cwd = suite.setup.cwd) => runDsh(['--profile', 'headless', ...args], { cwd, env: suite.setup.env })
const settings = (text: string) => writeFileSync(join(suite.setup.home, 'settings.yaml'), text)
const modelOf = (i: number) => (suite.model.requests[i]!.body as { model: string }).model
const modeOf = (home: string, id: string) => readSessionFile(home, id).events.filter((e) => e.type === 'permission/preset').map((e) => (e.data as { preset: string }).preset)

describe('headless and ACP share the host\'s defaults and refusals', () => {
  it('a model and permission mode from settings.yaml: the same on a headless session, that session loaded in ACP, and a new ACP session', async () => {
    settings('model: deepseek-reasoner\npermissionMode: read-only\n')
    suite.model.setScript([{ text: 'one' }, { text: 'two' }, { text: 'three' }])
    const first = await headless(['hi'])
    expect(first.code).toBe(0)
    const id = sessionIdOf(first.stderr)
    expect(modelOf(0)).toBe('deepseek-reasoner')
    expect(modeOf(suite.setup.home, id)).toEqual(['read-only'])

    const p = suite.start()
    await p.initialize()
    const loaded = await p.agent.request('session/load', { sessionId: id, cwd: suite.setup.cwd, mcpServers: [] })
    expect(loaded.modes?.currentModeId).toBe('read-only')
    expect(loaded.configOptions?.find((o) => o.id === 'model')).toMatchObject({ currentValue: 'deepseek-reasoner' })
    await p.agent.request('session/prompt', { sessionId: id, prompt: [{ type: 'text', text: 'again' }] })
    expect(modelOf(1)).toBe('deepseek-reasoner')

    const created = await p.agent.request('session/new', { cwd: suite.setup.cwd, mcpServers: [] })
    expect(created.modes?.currentModeId).toBe('read-only')
    expect(created.configOptions?.find((o) => o.id === 'model')).toMatchObject({ currentValue: 'deepseek-reasoner' })
    await p.agent.request('session/prompt', { sessionId: created.sessionId, prompt: [{ type: 'text', text: 'fresh' }] })
    expect(modelOf(2)).toBe('deepseek-reasoner')
    expect(await p.end()).toEqual({ code: 0, signal: null })
    expect(modeOf(suite.setup.home, created.sessionId)).toEqual(['read-only'])
  })

  it('the workspace "/" under workspace-write (settings.yaml) is refused at creation by both, and neither creates a session', async () => {
    settings('permissionMode: workspace-write\n')
    const run = await headless(['hi'], '/')
    expect(run.code).toBe(1)
    expect(run.stderr).toContain('UNSAFE_WORKSPACE: the workspace is "/"')

    const p = suite.start()
    await p.initialize()
    const error = await rpcError(p.agent.request('session/new', { cwd: '/', mcpServers: [] }))
    expect(error.message).toContain('UNSAFE_WORKSPACE: the workspace is "/"')
    expect(error.data).toMatchObject({ code: 'UNSAFE_WORKSPACE' })
    expect(storedSessions(suite.setup.home)).toEqual([])
    expect(suite.model.requests).toEqual([])
    // the refusal is of that workspace only: the agent goes on serving
    const ok = await p.agent.request('session/new', { cwd: suite.setup.cwd, mcpServers: [] })
    expect(ok.modes?.currentModeId).toBe('workspace-write')
    expect(await p.end()).toEqual({ code: 0, signal: null })
  })
})
