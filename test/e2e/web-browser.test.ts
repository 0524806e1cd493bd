import { startMockModel, type MockModel } from '@dsh/testkit'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { tempDir } from './helpers/dsh.js'
import { processesMatching, readSessionFile } from './helpers/session-file.js'
import { api, launchChromium, startWeb, watchedPage, type WebRun } from './helpers/web.js'

let model: MockModel
let browser: Browser
let home: string
let workspace: string
let run: WebRun | undefined
let context: BrowserContext
let errors: string[]

const env = (extra: Record<string, string> = {}) => ({ DSH_HOME: home, DEEPSEEK_BASE_URL: model.url, DEEPSEEK_API_KEY: 'mock-key', ...extra })
const card = (page: Page, status?: string) => page.locator(`[data-testid="tool-card"]${status ? `[data-status="${status}"]` : ''}`)

async function openApp(allow: RegExp[] = []): Promise<Page> {
  run ??= await startWeb({ cwd: workspace, env: env() })
  const page = await watchedPage(context, errors, allow)
  await page.goto(run.url)
  await page.waitForURL(`http://127.0.0.1:${run.port}/`)
  return page
}

/** Creates a session through the UI (folder browser → create) and returns its id. */
async function newSession(page: Page, dir = workspace): Promise<string> {
  await page.getByTestId('new-session').click()
  await page.getByTestId('folder-browser').waitFor()
  await page.getByTestId('workspace-path').fill(dir)
  await page.getByTestId('workspace-path').press('Enter')
  await page.getByTestId('create-session').click()
  await page.waitForURL(/\/s\/[^/]+$/)
  await page.locator('.session[data-ready="true"]').waitFor()
  return decodeURIComponent(new URL(page.url()).pathname.slice(3))
}

async function say(page: Page, text: string): Promise<void> {
  await page.getByTestId('composer').fill(text)
  await page.getByTestId('composer').press('Enter')
}

const idle = (page: Page) => page.locator('.session[data-running="false"]').waitFor()

beforeAll(async () => {
  model = await startMockModel()
  browser = await launchChromium()
})
afterAll(async () => {
  await browser?.close()
  await model?.close()
})
beforeEach(async () => {
  home = tempDir('dsh-web-home-')
  workspace = tempDir('dsh-web-ws-')
  model.setScript([])
  model.requests.length = 0
  errors = []
  context = await browser.newContext()
})
afterEach(async () => {
  await context.close()
  await run?.stop()
  run = undefined
  expect(errors).toEqual([])
})

describe('dsh web in Chromium', () => {
  it('creates a session in the chosen workspace and streams a markdown answer, hostile HTML inert', async () => {
    const chosen = join(workspace, 'project')
    mkdirSync(chosen)
    const hostile = '# Result\n\nHello **world** <script>window.__pwned = 1</script> [click](javascript:window.__pwned=2) <img src=x onerror="window.__pwned=3"> [ok](https://example.com)\n\n'
    model.setScript([{ text: hostile + 'tail '.repeat(40), chunkSize: 8, delayMs: 15 }])
    const page = await openApp()
    expect(await page.getByTestId('new-session').count()).toBe(1)
    const id = await newSession(page, chosen)
    expect(readSessionFile(home, id).header.cwd).toBe(chosen)
    await say(page, 'answer please')
    await page.locator('[data-testid="message"][data-role="user"]').filter({ hasText: 'answer please' }).waitFor()
    // streaming is visible: the answer is on the page before it is complete
    await page.locator('[data-testid="message"][data-role="assistant"][data-streaming="true"]').waitFor()
    await page.locator('[data-testid="message"][data-role="assistant"][data-streaming="false"]').filter({ hasText: 'tail tail' }).waitFor()
    await idle(page)
    const answer = page.locator('[data-testid="message"][data-role="assistant"]')
    expect(await answer.locator('h1').textContent()).toBe('Result')
    expect(await answer.locator('strong').textContent()).toBe('world')
    expect(await answer.locator('script, img, [onerror]').count()).toBe(0)
    expect(await answer.locator('a[href^="javascript"]').count()).toBe(0)
    expect(await answer.locator('a[href="https://example.com"]').getAttribute('rel')).toContain('noreferrer')
    expect(await answer.textContent()).toContain('<script>window.__pwned = 1</script>')
    expect(await page.evaluate("window.__pwned")).toBeUndefined()
    // the list shows it under its workspace
    await page.locator(`[data-testid="session-item"][data-session-id="${id}"]`).waitFor()
  })

  it('shows a bash card with live output, then its exit code, red when it failed', async () => {
    model.setScript([
      { toolCalls: [{ name: 'bash', arguments: { command: 'for i in 1 2 3 4 5; do echo line$i; sleep 0.5; done; exit 3', description: 'count' } }] },
      { text: 'counted' },
    ])
    const page = await openApp()
    await newSession(page)
    await say(page, 'count')
    const running = card(page, 'running')
    await running.locator('[data-testid="terminal-output"]').filter({ hasText: 'line1' }).waitFor()
    expect(await running.getAttribute('data-card')).toBe('terminal')
    expect(await running.locator('[data-testid="terminal-output"]').textContent()).not.toContain('line5')
    const failed = card(page, 'failed')
    await failed.waitFor()
    expect(await failed.locator('[data-testid="exit-status"]').getAttribute('data-exit-code')).toBe('3')
    expect(await failed.locator('[data-testid="terminal-output"]').textContent()).toContain('line5')
    await page.locator('[data-testid="message"][data-role="assistant"]').filter({ hasText: 'counted' }).waitFor()
  })

  it('an approval allowed writes the file; one rejected from the keyboard leaves none', async () => {
    const outside = tempDir('dsh-web-outside-')
    const escalate = (file: string) => ({ toolCalls: [{ name: 'bash', arguments: { command: `echo approved > ${join(outside, file)}`, escalate: true, justification: 'the test writes outside the workspace' } }] })
    model.setScript([escalate('yes.txt'), { text: 'wrote it' }, escalate('no.txt'), { text: 'did not' }])
    const page = await openApp()
    await newSession(page)
    await say(page, 'write yes')
    const approval = page.getByTestId('approval')
    await approval.waitFor()
    expect(await approval.textContent()).toContain(join(outside, 'yes.txt'))
    expect(await approval.locator('[data-decision]').evaluateAll((els) => els.map((e) => e.getAttribute('data-decision')))).toContain('reject')
    expect((await approval.getByTestId('allow-session-scope').textContent())?.length).toBeGreaterThan(30)
    await approval.locator('[data-decision="allow-once"]').click()
    await page.locator('[data-testid="message"][data-role="assistant"]').filter({ hasText: 'wrote it' }).waitFor()
    expect(readFileSync(join(outside, 'yes.txt'), 'utf8')).toBe('approved\n')
    await idle(page)
    await say(page, 'write no')
    await approval.waitFor()
    await page.keyboard.press('n')
    await page.locator('[data-testid="message"][data-role="assistant"]').filter({ hasText: 'did not' }).waitFor()
    expect(existsSync(join(outside, 'no.txt'))).toBe(false)
  })

  it('Stop kills the running command and the card stops running', async () => {
    model.setScript([{ toolCalls: [{ name: 'bash', arguments: { command: 'sleep 4321.5' } }] }, { text: 'never' }])
    const page = await openApp()
    await newSession(page)
    await say(page, 'sleep')
    await card(page, 'running').waitFor()
    await expect.poll(() => processesMatching('sleep 4321.5').length, { timeout: 15_000 }).toBeGreaterThan(0)
    await page.getByTestId('stop').click()
    await idle(page)
    await expect.poll(() => processesMatching('sleep 4321.5').length, { timeout: 15_000 }).toBe(0)
    expect(await card(page, 'running').count()).toBe(0)
  })

  it('a reload mid-turn restores the transcript and the pending approval, with no duplicated item', async () => {
    const outside = tempDir('dsh-web-outside-')
    model.setScript([
      { text: 'looking first' , toolCalls: [{ name: 'bash', arguments: { command: `echo ok > ${join(outside, 'after-reload.txt')}`, escalate: true, justification: 'reload test' } }] },
      { text: 'finished after reload' },
    ])
    const page = await openApp()
    const id = await newSession(page)
    await say(page, 'go')
    await page.getByTestId('approval').waitFor()
    await page.reload()
    await page.locator('.session[data-ready="true"]').waitFor()
    await page.getByTestId('approval').waitFor()
    expect(await page.locator('[data-testid="message"][data-role="user"]').count()).toBe(1)
    expect(await page.locator('[data-testid="message"][data-role="assistant"]').count()).toBe(1)
    expect(await page.getByTestId('tool-card').count()).toBe(1)
    expect(await page.locator('.session').getAttribute('data-running')).toBe('true')
    await page.getByTestId('approval').locator('[data-decision="allow-once"]').click()
    await page.locator('[data-testid="message"][data-role="assistant"]').filter({ hasText: 'finished after reload' }).waitFor()
    expect(existsSync(join(outside, 'after-reload.txt'))).toBe(true)
    // the log after the reload: one user message, one turn
    const { events } = readSessionFile(home, id)
    expect(events.filter((e) => e.type === 'user/message')).toHaveLength(1)
    expect(events.filter((e) => e.type === 'turn/end')).toHaveLength(1)
  })

  it('a session deleted in another tab says so in this one', async () => {
    const page = await openApp([/status of 404/])
    const id = await newSession(page)
    const other = await watchedPage(context, errors)
    await other.goto(`http://127.0.0.1:${run!.port}/`)
    const item = other.locator(`[data-testid="session-item"][data-session-id="${id}"]`)
    await item.hover()
    await item.locator('[data-action="delete"]').click()
    await item.locator('[data-action="confirm-delete"]').click()
    await page.getByTestId('session-deleted').waitFor()
    expect(existsSync(join(home, 'sessions', `${id}.jsonl`))).toBe(false)
  })

  it('shows a 5 MB answer without breaking the page', async () => {
    const big = 'x'.repeat(5 * 1024 * 1024 - 10) + ' END-MARK'
    model.setScript([{ text: big, chunkSize: 512 * 1024 }])
    const page = await openApp()
    await newSession(page)
    await say(page, 'big')
    await page.locator('[data-testid="message"][data-role="assistant"][data-streaming="false"]').filter({ hasText: 'END-MARK' }).waitFor({ timeout: 45_000 })
    expect(await page.locator('[data-testid="message"][data-role="assistant"] .plain').count()).toBe(1)
  })

  it('survives a server crash and restart under the open page: offline, then re-synced, the cut call interrupted', async () => {
    const token = 'c'.repeat(64)
    model.setScript([{ toolCalls: [{ name: 'bash', arguments: { command: 'sleep 4322.5' } }] }])
    run = await startWeb({ cwd: workspace, env: env({ DSH_WEB_TOKEN: token }) })
    const port = run.port
    const page = await openApp([/ERR_CONNECTION_REFUSED|ERR_EMPTY_RESPONSE|ERR_INCOMPLETE_CHUNKED_ENCODING|net::ERR/])
    const id = await newSession(page)
    await say(page, 'sleep')
    await card(page, 'running').waitFor()
    await run.stop('SIGKILL')
    await page.locator('[data-testid="connection-status"]:not([data-state="connected"])').waitFor()
    run = await startWeb({ cwd: workspace, env: env({ DSH_WEB_TOKEN: token }), args: ['--port', String(port)] })
    await page.locator('[data-testid="connection-status"][data-state="connected"]').waitFor({ timeout: 30_000 })
    await card(page, 'interrupted').waitFor({ timeout: 30_000 })
    expect(await card(page, 'interrupted').textContent()).toContain('interrupted — outcome unknown')
    expect(await page.locator('[data-testid="message"][data-role="user"]').count()).toBe(1)
    expect(readSessionFile(home, id).events.some((e) => e.type === 'tool/result' && (e.data as { synthetic?: boolean }).synthetic)).toBe(true)
  })
  it('the token never reaches another server on 127.0.0.1 that the same browser visits', async () => {
    const seen: string[] = []
    const other = createServer((req, res) => {
      seen.push(JSON.stringify(req.headers))
      res.writeHead(200, { 'Content-Type': 'text/html' })
      res.end('<html><body>another local server</body></html>')
    })
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve))
    try {
      const page = await openApp()
      const id = await newSession(page)
      expect(readSessionFile(home, id).header.cwd).toBe(workspace)
      expect(page.url()).not.toContain(run!.token)
      const visit = await context.newPage()
      await visit.goto(`http://127.0.0.1:${(other.address() as AddressInfo).port}/`)
      await visit.getByText('another local server').waitFor()
      expect(seen.length).toBeGreaterThan(0)
      for (const headers of seen) expect(headers).not.toContain(run!.token)
      await page.reload()
      await page.getByTestId('session-item').first().waitFor()
      expect(await page.getByTestId('unauthorised').count()).toBe(0)
    } finally {
      other.close()
    }
  })
})

describe('dsh web: questions, queue, settings, drain', () => {
  it('answers a question from the number keys; the model gets the chosen label', async () => {
    model.setScript([
      { toolCalls: [{ name: 'question', arguments: { questions: [{ question: 'Which colour?', options: [{ label: 'red' }, { label: 'blue' }] }] } }] },
      { text: 'blue it is', expect: { lastToolResultIncludes: 'blue' } },
    ])
    const page = await openApp()
    const id = await newSession(page)
    await say(page, 'ask me')
    const q = page.getByTestId('question')
    await q.waitFor()
    expect(await q.textContent()).toContain('Which colour?')
    await page.keyboard.press('2')
    await page.locator('[data-testid="message"][data-role="assistant"]').filter({ hasText: 'blue it is' }).waitFor()
    const answer = readSessionFile(home, id).events.find((e) => e.type === 'question/answer')
    expect(answer?.data).toMatchObject({ answers: [{ id: 'q1', selected: ['o2'] }] })
  })

  it('Enter while a turn runs queues the message; it can be edited and is sent when the turn ends', async () => {
    model.setScript([
      { toolCalls: [{ name: 'bash', arguments: { command: 'sleep 1.5; echo slept' } }] },
      { text: 'first done' },
      { text: 'second done', expect: { lastUserTextIncludes: 'edited follow-up' } },
    ])
    const page = await openApp()
    const id = await newSession(page)
    await say(page, 'first')
    await card(page, 'running').waitFor()
    await say(page, 'follow-up')
    const queued = page.getByTestId('queued-message')
    await queued.waitFor()
    await queued.locator('input').fill('edited follow-up')
    await page.locator('[data-testid="message"][data-role="assistant"]').filter({ hasText: 'second done' }).waitFor()
    const users = readSessionFile(home, id).events.filter((e) => e.type === 'user/message')
    expect(users.map((e) => JSON.stringify(e.data))).toEqual([expect.stringContaining('first'), expect.stringContaining('edited follow-up')])
    expect(await page.getByTestId('queued-message').count()).toBe(0)
  })

  it('Esc in the composer cancels the turn', async () => {
    model.setScript([{ toolCalls: [{ name: 'bash', arguments: { command: 'sleep 4323.5' } }] }, { text: 'never' }])
    const page = await openApp()
    const id = await newSession(page)
    await say(page, 'sleep')
    await card(page, 'running').waitFor()
    await page.getByTestId('composer').press('Escape')
    await idle(page)
    await expect.poll(() => processesMatching('sleep 4323.5').length, { timeout: 15_000 }).toBe(0)
    expect(readSessionFile(home, id).events.filter((e) => e.type === 'turn/end').at(-1)?.data).toMatchObject({ reason: 'aborted' })
  })

  it('settings store a key write-only and ask before danger-full-access becomes the default', async () => {
    const page = await openApp()
    await page.getByTestId('settings-open').click()
    const row = page.locator('[data-testid="credential"][data-provider="openai"]')
    await row.waitFor()
    expect(await row.getAttribute('data-configured')).toBe('false')
    await row.getByTestId('key-input').fill('sk-typed-in-the-browser-42')
    await row.locator('button', { hasText: 'Save' }).click()
    await page.locator('[data-testid="credential"][data-provider="openai"][data-configured="true"]').waitFor()
    expect(await row.getByTestId('key-input').inputValue()).toBe('')
    expect(await page.content()).not.toContain('sk-typed-in-the-browser-42')
    await page.getByTestId('default-permission').selectOption('danger-full-access')
    const save = page.getByTestId('danger-ack').locator('xpath=../following-sibling::button')
    expect(await save.isDisabled()).toBe(true)
    await page.getByTestId('danger-ack').check()
    await save.click()
    await page.getByTestId('settings-message').filter({ hasText: 'saved' }).waitFor()
    // the key's save said "saved" too: wait for the world (the file), not for the message
    const settingsFile = join(home, 'settings.yaml')
    await expect.poll(() => existsSync(settingsFile) ? readFileSync(settingsFile, 'utf8') : '', { timeout: 15_000 }).toContain('danger-full-access')
  })

  it('Ctrl-C drains: the running command is killed, the turn is closed in the log, exit 0', async () => {
    model.setScript([{ toolCalls: [{ name: 'bash', arguments: { command: 'sleep 4324.5' } }] }])
    // while it drains the server answers 503 and then goes away: the page may see both
    const page = await openApp([/net::ERR/, /status of 503/])
    const id = await newSession(page)
    await say(page, 'sleep')
    await card(page, 'running').waitFor()
    await expect.poll(() => processesMatching('sleep 4324.5').length, { timeout: 15_000 }).toBeGreaterThan(0)
    expect(await run!.stop('SIGINT')).toBe(0)
    run = undefined
    expect(processesMatching('sleep 4324.5')).toEqual([])
    const events = readSessionFile(home, id).events
    expect(events.at(-1)).toMatchObject({ type: 'turn/end', data: { reason: 'aborted' } })
    await page.locator('[data-testid="connection-status"]:not([data-state="connected"])').waitFor()
  })
})

describe('dsh web: cards, todo strip, presets', () => {
  it('renders read, a one-line edit as a minimal diff, search and the todo strip; the preset switch is logged', async () => {
    const file = join(workspace, 'long.txt')
    writeFileSync(file, Array.from({ length: 60 }, (_, i) => `line ${i + 1}`).join('\n') + '\n')
    model.setScript([
      { toolCalls: [{ name: 'read', arguments: { path: 'long.txt' } }] },
      { toolCalls: [{ name: 'edit', arguments: { path: 'long.txt', old_string: 'line 25\n', new_string: 'line twenty-five\n' } }] },
      { toolCalls: [{ name: 'grep', arguments: { pattern: 'twenty' } }] },
      { toolCalls: [{ name: 'todo_write', arguments: { todos: [{ content: 'Edit the file', status: 'completed' }, { content: 'Check it', status: 'in_progress', activeForm: 'Checking it' }] } }] },
      { text: 'all cards shown' },
    ])
    const page = await openApp()
    const id = await newSession(page)
    await say(page, 'cards')
    await page.locator('[data-testid="message"][data-role="assistant"]').filter({ hasText: 'all cards shown' }).waitFor()
    expect(await page.locator('[data-testid="tool-card"]').evaluateAll((els) => els.map((e) => `${e.getAttribute('data-card')}:${e.getAttribute('data-status')}`)))
      .toEqual(['read:done', 'diff:done', 'search:done', 'generic:done'])
    const diff = page.locator('[data-testid="tool-card"][data-card="diff"]')
    // the edit presenter's card carries the replaced snippet, so numbers count within it
    expect(await diff.locator('[data-line-kind="del"] .code').allTextContents()).toEqual(['-line 25'])
    expect(await diff.locator('[data-line-kind="add"] .code').allTextContents()).toEqual(['+line twenty-five'])
    expect(await diff.locator('tr[data-line-kind]').count()).toBeLessThanOrEqual(8)
    expect(readFileSync(file, 'utf8')).toContain('line twenty-five\n')
    const strip = page.getByTestId('todo-strip')
    expect(await strip.locator('[data-status]').evaluateAll((els) => els.map((e) => e.getAttribute('data-status')))).toEqual(['completed', 'in_progress'])
    expect(await strip.textContent()).toContain('Checking it')
    await page.getByTestId('permission-mode').selectOption('read-only')
    await expect.poll(() => readSessionFile(home, id).events.filter((e) => e.type === 'permission/preset').at(-1)?.data).toMatchObject({ preset: 'read-only' })
  })
})

describe('dsh web: subagents', () => {
  it('opens a subagent session read-only from its task card', async () => {
    model.setScript([
      { toolCalls: [{ name: 'task', arguments: { description: 'look around', prompt: 'say hi from the child' } }] },
      { text: 'child answer here', expect: { lastUserTextIncludes: 'say hi from the child' } },
      { text: 'parent done' },
    ])
    const page = await openApp()
    const parentId = await newSession(page)
    await say(page, 'delegate')
    await page.locator('[data-testid="message"][data-role="assistant"]').filter({ hasText: 'parent done' }).waitFor()
    const link = page.getByTestId('tool-card').locator('a', { hasText: 'subagent' })
    await link.click()
    await page.waitForURL((u) => u.pathname.startsWith('/s/') && !u.pathname.endsWith(parentId))
    await page.locator('.session[data-ready="true"]').waitFor()
    await page.locator('[data-testid="message"][data-role="assistant"]').filter({ hasText: 'child answer here' }).waitFor()
    expect(await page.locator('.badge', { hasText: 'read-only' }).count()).toBe(1)
    expect(await page.getByTestId('composer').count()).toBe(0)
  })
})

describe('dsh web: the session list', () => {
  it('renames, forks, searches content after a pause, and shows waiting on the dot', async () => {
    const outside = tempDir('dsh-web-outside-')
    model.setScript([
      { text: 'the answer mentions zebrafish' },
      { toolCalls: [{ name: 'bash', arguments: { command: `echo x > ${join(outside, 'dot.txt')}`, escalate: true, justification: 'dot test' } }] },
      { text: 'ok' },
    ])
    const page = await openApp()
    const id = await newSession(page)
    await say(page, 'hello')
    await page.locator('[data-testid="message"][data-role="assistant"]').filter({ hasText: 'zebrafish' }).waitFor()
    await idle(page)
    const item = page.locator(`[data-testid="session-item"][data-session-id="${id}"]`)
    await item.locator('[data-action="rename"]').click()
    await page.getByTestId('rename-input').fill('Renamed here')
    await page.getByTestId('rename-input').press('Enter')
    await item.filter({ hasText: 'Renamed here' }).waitFor()
    expect(readSessionFile(home, id).events.some((e) => e.type === 'session/title' && (e.data as { title?: string }).title === 'Renamed here')).toBe(true)
    // content search (not in any title) after a pause
    await page.getByTestId('search').fill('zebrafish')
    await page.locator('[data-testid="session-item"]').first().waitFor()
    expect(await page.locator('[data-testid="session-item"]').evaluateAll((els) => els.map((e) => e.getAttribute('data-session-id')))).toEqual([id])
    await page.getByTestId('search').fill('')
    // a pending approval shows as waiting in the list
    await say(page, 'dot')
    await page.getByTestId('approval').waitFor()
    await page.locator(`[data-testid="session-item"][data-session-id="${id}"][data-status="waiting"]`).waitFor()
    await page.keyboard.press('n')
    await idle(page)
    // a result that arrives while another page is shown is unseen
    model.setScript([{ toolCalls: [{ name: 'bash', arguments: { command: 'sleep 1' } }] }, { text: 'finished unseen' }])
    await say(page, 'later')
    await card(page, 'running').last().waitFor()
    await page.getByTestId('new-session').click()
    await page.locator(`[data-testid="session-item"][data-session-id="${id}"][data-status="unseen"]`).waitFor()
    await item.locator('a').click()
    await page.locator('.session[data-ready="true"]').waitFor()
    await page.locator(`[data-testid="session-item"][data-session-id="${id}"][data-status="idle"]`).waitFor()
    // fork: a new session with the same transcript
    await item.locator('[data-action="fork"]').click()
    await page.waitForURL((u) => u.pathname.startsWith('/s/') && !u.pathname.endsWith(id))
    await page.locator('.session[data-ready="true"]').waitFor()
    await page.locator('[data-testid="message"][data-role="assistant"]').filter({ hasText: 'zebrafish' }).waitFor()
    const forkId = decodeURIComponent(new URL(page.url()).pathname.slice(3))
    expect(readSessionFile(home, forkId).header.parent).toMatchObject({ id, fork: true })
  })
})

describe('dsh web: long transcripts and export', () => {
  it('a stored session of 1,000 turns opens windowed; export gives the log as JSONL', async () => {
    const id = 'long-session-1000'
    const lines = [JSON.stringify({ format: 'dsh-session', version: 1, id, created: 1, cwd: workspace })]
    let seq = 0
    const add = (type: string, data: unknown) => lines.push(JSON.stringify({ type, seq: seq++, time: 1000 + seq, data }))
    add('permission/preset', { preset: 'workspace-write' })
    for (let turn = 1; turn <= 1000; turn++) {
      add('turn/start', { turn })
      add('user/message', { id: `u${turn}`, content: [{ type: 'text', text: `question ${turn}` }] })
      add('step/start', { turn, step: 1 })
      add('assistant/message', { id: `a${turn}`, content: [{ type: 'text', text: `answer **${turn}**` }], finish: 'stop' })
      add('step/end', { turn, step: 1 })
      add('turn/end', { turn, reason: 'completed' })
    }
    mkdirSync(join(home, 'sessions'), { recursive: true })
    writeFileSync(join(home, 'sessions', `${id}.jsonl`), lines.join('\n') + '\n')
    const page = await openApp()
    await page.goto(`http://127.0.0.1:${run!.port}/s/${id}`)
    await page.locator('.session[data-ready="true"]').waitFor({ timeout: 30_000 })
    await page.locator('[data-testid="message"][data-role="assistant"]').filter({ hasText: 'answer 1000' }).waitFor()
    const rendered = await page.getByTestId('message').count()
    expect(rendered).toBeLessThanOrEqual(200)
    expect(await page.locator('[data-testid="message"]').filter({ hasText: 'question 1' }).filter({ hasText: /^question 1$/ }).count()).toBe(0)
    await page.locator('.more').click()
    expect(await page.getByTestId('message').count()).toBe(rendered + 200)
    const download = page.waitForEvent('download')
    await page.getByTestId('export').click()
    const file = await (await download).path()
    const exported = readFileSync(file, 'utf8').split('\n').filter(Boolean)
    expect(JSON.parse(exported[0]!)).toMatchObject({ id })
    expect(exported.slice(1).map((l) => (JSON.parse(l) as { seq: number }).seq).slice(0, 6001)).toEqual(Array.from({ length: 6001 }, (_, i) => i))
  })
})

describe('dsh web from outside the page', () => {
  it('keeps keys write-only: no response, frame or log holds the key', async () => {
    run = await startWeb({ cwd: workspace, env: env() })
    const secret = 'sk-web-secret-0123456789abcdef'
    await api(run, 'credentials/set', { provider: 'openai', key: secret })
    const seen: unknown[] = [
      await api(run, 'credentials/describe', {}), await api(run, 'host/describe', {}), await api(run, 'settings/read', {}),
    ]
    expect(seen[0]).toMatchObject({ providers: expect.arrayContaining([expect.objectContaining({ provider: 'openai', configured: true, source: 'store' })]) })
    const bad = await fetch(`http://127.0.0.1:${run.port}/api/credentials/set`, { method: 'POST', headers: { Authorization: `Bearer ${run.token}`, 'Content-Type': 'application/json' }, body: JSON.stringify({ provider: 'openai', key: secret, extra: secret }) })
    seen.push(await bad.text())
    expect(JSON.stringify(seen)).not.toContain(secret)
    await run.stop()
    expect(run.stdout() + run.stderr()).not.toContain(secret)
    run = undefined
  })

  it('a foreign Host, a cross-site text/plain POST or a missing token creates no session', async () => {
    run = await startWeb({ cwd: workspace, env: env() })
    const body = JSON.stringify({ workspace })
    const post = (headers: Record<string, string>) => fetch(`http://127.0.0.1:${run!.port}/api/session/create`, { method: 'POST', headers, body })
    expect((await post({ 'Content-Type': 'application/json' })).status).toBe(401)
    expect((await post({ Authorization: `Bearer ${run.token}`, 'Content-Type': 'text/plain' })).status).toBe(415)
    expect((await post({ Authorization: `Bearer ${run.token}`, 'Content-Type': 'application/json', Origin: 'http://evil.example' })).status).toBe(403)
    expect(existsSync(join(home, 'sessions')) ? (await api(run, 'session/list', {})).sessions : []).toEqual([])
    const ok = await api(run, 'session/create', { workspace })
    expect(existsSync(join(home, 'sessions', `${ok.session.id}.jsonl`))).toBe(true)
  })

  it('refuses a missing or non-directory workspace in the form, and bad cursors on the real host', async () => {
    const page = await openApp([/status of 409/])
    await page.getByTestId('folder-browser').waitFor()
    await page.getByTestId('workspace-path').fill(join(workspace, 'does-not-exist'))
    await page.getByTestId('create-session').click()
    await page.getByTestId('form-error').filter({ hasText: 'does-not-exist' }).waitFor()
    writeFileSync(join(workspace, 'plain.txt'), 'x')
    await page.getByTestId('workspace-path').fill(join(workspace, 'plain.txt'))
    await page.getByTestId('create-session').click()
    await page.getByTestId('form-error').filter({ hasText: 'plain.txt' }).waitFor()
    expect((await api(run!, 'session/list', {})).sessions).toEqual([])
    const { session } = await api(run!, 'session/create', { workspace })
    const events = (cursor: string) => fetch(`http://127.0.0.1:${run!.port}/api/events?session=${session.id}`, { headers: { Authorization: `Bearer ${run!.token}`, 'Last-Event-ID': cursor } })
    const beyond = await events(String(session.lastSeq + 5))
    expect([beyond.status, ((await beyond.json()) as { error: { data: { code: string } } }).error.data.code]).toEqual([400, 'CURSOR_BEYOND_END'])
    const nan = await events('later')
    expect([nan.status, ((await nan.json()) as { error: { data: { code: string } } }).error.data.code]).toEqual([400, 'BAD_CURSOR'])
  })

  it('dsh web --help answers without booting; a non-loopback --host and a taken port fail clearly', async () => {
    const { runDsh } = await import('./helpers/dsh.js')
    const help = await runDsh(['web', '--help'], { env: env() })
    expect(help.code).toBe(0)
    expect(help.stdout).toContain('dsh web [--port N]')
    const open = await runDsh(['web', '--host', '0.0.0.0', '--no-open'], { env: env() })
    expect(open.code).toBe(2)
    expect(open.stderr).toContain('loopback')
    run = await startWeb({ cwd: workspace, env: env() })
    const taken = await runDsh(['web', '--port', String(run.port), '--no-open'], { env: env() })
    expect(taken.code).toBe(1)
    expect(taken.stderr).toContain('PORT_IN_USE')
    expect(taken.stderr).not.toMatch(/\n\s+at /)
  })
})
