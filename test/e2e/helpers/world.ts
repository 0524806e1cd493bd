import { startMockModel, type MockModel } from '@dsh/testkit'
import type { ChildProcess } from 'node:child_process'
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest'
import { collect, runDsh, spawnDsh, tempDir, waitForOutput, type RunOptions, type RunResult } from './dsh.js'
import { expectModelSawOnlyLogs, processesMatching, sessionIdOf } from './session-file.js'

export interface WorldOptions {
  /**
   * After each test, every request the model saw must be what a stored session log
   * derives (`expectModelSawOnlyLogs`). Each file states its choice.
   */
  logsCheck: boolean
  /** A fresh temp workspace per test, the default cwd of runs (default true; without it runs start in the repository root). */
  workspace?: boolean
  /** Where each test's DSH_HOME is (called in beforeEach; default a fresh temp directory). */
  home?: () => string
  /** DEEPSEEK_API_KEY of `env()` (default 'mock-key'); null: none in the environment. */
  apiKey?: string | null
}

/** The per-test state of a file's e2e world, read after beforeEach has run. */
export interface DshWorld {
  /** The scripted model, one per file; its script and recorded requests are reset before each test. */
  readonly model: MockModel
  readonly home: string
  readonly workspace: string
  /** DSH_HOME, DEEPSEEK_BASE_URL and DEEPSEEK_API_KEY for this test, then `extra` (an undefined value removes the variable). */
  env(extra?: Record<string, string | undefined>): Record<string, string>
  /** `dsh ...args` to completion, in the workspace with `env()`; `options.env` is laid over `env()`. */
  run(args: string[], options?: RunOptions): Promise<RunResult>
  /** `dsh --profile headless ...args`, as `run`. */
  headless(args: string[], options?: RunOptions): Promise<RunResult>
  /** Spawns `dsh ...args` with the same defaults as `run`. */
  spawn(args: string[], options?: RunOptions): ChildProcess
}

/**
 * Registers the hooks an e2e file of the built `dsh` shares: the mock model started once
 * (beforeAll) and closed (afterAll); per test a fresh home and workspace, the model's script
 * emptied and its requests cleared (beforeEach); with `logsCheck`, the log check (afterEach).
 * Call it at the top level of the file, before the file's own hooks.
 */
export function useDshWorld(options: WorldOptions): DshWorld {
  let model: MockModel | undefined
  let home: string | undefined
  let workspace: string | undefined
  const apiKey = options.apiKey === undefined ? 'mock-key' : options.apiKey
  const made = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`useDshWorld: no ${what} yet (read it inside a test or hook${what === 'workspace' ? '; there is none with workspace: false' : ''})`)
    return value
  }

  beforeAll(async () => { model = await startMockModel() })
  afterAll(async () => { await model?.close() })
  beforeEach(() => {
    home = options.home ? options.home() : tempDir('dsh-home-')
    if (options.workspace !== false) workspace = tempDir('dsh-ws-')
    world.model.setScript([])
    world.model.requests.length = 0
  })
  if (options.logsCheck) afterEach(() => expectModelSawOnlyLogs(world.home, world.model))

  const withDefaults = (o: RunOptions): RunOptions => {
    const cwd = o.cwd ?? workspace
    return { ...o, ...(cwd !== undefined ? { cwd } : {}), env: world.env(o.env) }
  }
  const world: DshWorld = {
    get model() { return made(model, 'model') },
    get home() { return made(home, 'home') },
    get workspace() { return made(workspace, 'workspace') },
    env(extra = {}) {
      const env: Record<string, string | undefined> = { DSH_HOME: world.home, DEEPSEEK_BASE_URL: world.model.url, DEEPSEEK_API_KEY: apiKey ?? undefined, ...extra }
      return Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined))
    },
    run: (args, o = {}) => runDsh(args, withDefaults(o)),
    headless: (args, o = {}) => runDsh(['--profile', 'headless', ...args], withDefaults(o)),
    spawn: (args, o = {}) => spawnDsh(args, withDefaults(o)),
  }
  return world
}

/**
 * A crash mid-tool: `dsh --profile headless start` whose one bash call is `command` is
 * killed with SIGKILL once it printed `→ bash` and `ready(id)` resolved; then what is left
 * of the command (processes whose command line holds it) is killed too. Resolves with the
 * session id.
 */
export async function killMidTool(world: DshWorld, command: string, ready: (id: string) => Promise<void> = async () => {}): Promise<string> {
  world.model.setScript([{ toolCalls: [{ name: 'bash', arguments: { command } }] }])
  const child = world.spawn(['--profile', 'headless', 'start'])
  const done = collect(child)
  const id = sessionIdOf(await waitForOutput(child.stderr!, (t) => t.includes('→ bash')))
  await ready(id)
  child.kill('SIGKILL')
  await done
  for (const pid of processesMatching(command)) process.kill(pid, 'SIGKILL')
  return id
}
