import type { Context } from '@deepseek-ai/cordis'
import type { Session } from '@dsh/core'
import * as titlesPlugin from '@dsh/core/titles'
import { TITLE_SYSTEM } from '@dsh/core/titles'
import type { SessionEvent } from '@dsh/protocol'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { type Script } from '../src/index.js'
import { buildTree, tempDir, useMockModel } from '../src/tree.js'

const model = useMockModel()
const titler = useMockModel({ env: false })
let sessionsDir: string

/** A second provider on its own mock, so title requests never race the turn's. */
const titlerProvider = (baseUrl: string) => ({
  name: 'titler-provider', inject: ['llm'],
  apply: (ctx: Context) => { ctx.llm.registerProvider({ id: 'titler', label: 'Titler', protocol: 'openai', baseUrl, apiKeyEnv: 'DEEPSEEK_API_KEY', defaultModel: 'tiny', models: [] }) },
})

/** A real JSONL store, so listing reads titles the way `dsh` does. */
async function tree(script: Script, titles: Record<string, unknown> = {}) {
  sessionsDir = tempDir('dsh-sessions-')
  return buildTree(model(), { script, store: { dir: sessionsDir }, plugins: [[titlerProvider(titler().url)], [titlesPlugin, titles]] })
}

const titleEvents = (session: Session) => session.events.filter((e) => e.type === 'session/title').map((e) => ({ data: e.data, ignorable: e.ignorable }))

function nextTitle(root: Context, session: Session, source: string): Promise<SessionEvent> {
  return new Promise((resolve) => {
    const dispose = root.on('session/event', (s: Session, event: SessionEvent) => {
      if (s !== session) return
      if ((event.type === 'session/title' && (event.data as { source: string }).source === source) || event.type === 'notice') {
        dispose()
        resolve(event)
      }
    })
  })
}

describe('session titles', () => {
  it('titles a session from its first prompt, once, and lists it', async () => {
    const { root, session, agent } = await tree([{ text: 'one' }, { text: 'two' }])
    await agent.followup('  Why does the parser drop the last token when the input ends without a newline?\nDetails follow.')
    await agent.followup('And another question')
    const title = 'Why does the parser drop the last token when the input ends…'
    expect(titleEvents(session)).toEqual([{ data: { title, source: 'prompt' }, ignorable: true }])
    const seq = session.events.find((e) => e.type === 'session/title')!.seq
    expect(session.events.slice(0, seq).map((e) => e.type)).toEqual(['turn/start', 'user/message'])
    expect(titler().requests).toEqual([])
    await session.flush()
    expect((await root.sessions.list()).map((i) => [i.id, i.title])).toEqual([[session.id, title]])
    // the log on disk holds it too (what a later `list` rebuilds from)
    expect(readFileSync(join(sessionsDir, `${session.id}.jsonl`), 'utf8')).toContain(`"type":"session/title"`)
  })

  it('waits for a prompt with text', async () => {
    const { session } = await tree([])
    session.append('user/message', { id: 'u-0', content: [{ type: 'image', mimeType: 'image/png', data: 'AAAA' }] })
    session.append('user/message', { id: 'u-1', content: [{ type: 'text', text: 'describe the picture' }] })
    await Promise.resolve()
    expect(titleEvents(session).map((t) => t.data)).toEqual([{ title: 'describe the picture', source: 'prompt' }])
  })

  it('with summarize, asks the model in the background and logs its title', async () => {
    titler().setScript([{ text: '"Parser drops final token."' }])
    const { root, session } = await tree([], { summarize: true, provider: 'titler' })
    const modelTitle = nextTitle(root, session, 'model')
    session.append('user/message', { id: 'u-0', content: [{ type: 'text', text: 'the parser loses the last token' }] })
    expect((await modelTitle).data).toEqual({ title: 'Parser drops final token', source: 'model' })
    expect(titleEvents(session).map((t) => t.data)).toEqual([
      { title: 'the parser loses the last token', source: 'prompt' },
      { title: 'Parser drops final token', source: 'model' },
    ])
    expect(titler().requests.map((r) => r.body)).toEqual([{
      model: 'tiny', stream: true, stream_options: { include_usage: true }, max_tokens: 64,
      messages: [{ role: 'system', content: TITLE_SYSTEM }, { role: 'user', content: 'the parser loses the last token' }],
    }])
    expect(model().requests).toEqual([])
  })

  it('never blocks the turn, and a failed summary is an ignorable notice', async () => {
    titler().setScript([{ error: { status: 500, message: 'titler down' } }])
    const { root, session, agent } = await tree([{ text: 'answer' }], { summarize: true, provider: 'titler' })
    const notice = nextTitle(root, session, 'model')
    expect(await agent.followup('fix it')).toMatchObject({ reason: 'completed', text: 'answer' })
    const event = await notice
    expect({ type: event.type, ignorable: event.ignorable, source: (event.data as { source: string }).source }).toEqual({ type: 'notice', ignorable: true, source: 'titles' })
    expect((event.data as { message: string }).message).toMatch(/^could not summarise a session title: SERVER: /)
    expect(titleEvents(session).map((t) => t.data)).toEqual([{ title: 'fix it', source: 'prompt' }])
  })

  it('a stalled summary does not hold the turn and is dropped on unload', async () => {
    titler().setScript([{ fault: 'stall' }])
    const { root, session, agent } = await tree([{ text: 'answer' }], { summarize: true, provider: 'titler' })
    expect(await agent.followup('fix it')).toMatchObject({ reason: 'completed', text: 'answer' })
    expect(titler().requests).toHaveLength(1)
    await root.fiber.dispose()
    expect(session.events.filter((e) => e.type === 'notice')).toEqual([])
    expect(titleEvents(session).map((t) => t.data)).toEqual([{ title: 'fix it', source: 'prompt' }])
  })
})
