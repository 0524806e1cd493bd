import { pathToFileURL } from 'node:url'
import type { Context, Fiber } from '@deepseek-ai/cordis'
import { DshError, didYouMean } from '@dsh/protocol'
import { rowFiles } from '../compose/compose.js'
import { absoluteName } from '../compose/dump.js'
import type { ComposedRow } from '../compose/types.js'
import { bundleActive, bundledUrl, importBundled, importExternal, shareBundle } from '../bundled.js'
import { resolveMemo, resolveModule, type ResolveMemo } from '../resolve.js'
import { configError, fromValidationError, pluginError, reasonOf, type SchemaIssue } from './errors.js'

/**
 * Mounts composed rows into a cordis tree and applies later compositions as a
 * difference (config-only reload). Each enabled row is imported and loaded with
 * `ctx.plugin(module, config)` under the root (its logger named after the row id).
 * Fail closed: every row to mount is resolved, imported and its config validated
 * before anything is disposed or mounted; a failure there (module not found, import
 * error, no plugin, bad or unknown config key) throws BOOT_FAILED listing each failed
 * row, and the tree is left as it was. A row whose `apply` throws stops the rows after
 * it from mounting and fails the apply the same way. A row marked `optional: true` is
 * the exception: its failure is recorded (state `failed`, reported) and the rest go on.
 * Rows whose services never appear stay pending and report what they wait for.
 */
export type RowState = 'active' | 'pending' | 'loading' | 'failed' | 'disabled'

export interface RowStatus {
  id: string
  name: string
  state: RowState
  /** `CODE: message` for failed rows. */
  reason?: string
  /** The row is marked `optional: true` (its failure does not stop the run). */
  optional?: true
  /** For pending rows: the injected services that are not provided. */
  waitingFor?: string[]
  /** The files that produced or changed the row. */
  files: string[]
}

export interface ApplyResult {
  added: string[]
  removed: string[]
  remounted: string[]
}

export interface MounterOptions {
  root: Context
  /** Directories row names resolve from, in order (the profile, then dsh's installation). */
  searchDirs: readonly string[]
  conditions?: readonly string[]
  /** Module loader (tests may swap it); defaults to dynamic `import()` of the file URL. */
  importModule?: (url: string) => Promise<unknown>
}

interface Entry {
  composed: ComposedRow
  signature: string
  fiber?: Fiber
  error?: DshError
}

// FiberState is a const enum in cordis' typings (unusable under isolatedModules).
const PENDING = 0
const LOADING = 1
const ACTIVE = 2
const FAILED = 3
const UNLOADING = 5

type PluginLike = { apply: (...args: any[]) => unknown; Config?: unknown; inject?: unknown; name?: unknown } | ((...args: any[]) => unknown)

export class Mounter {
  readonly root: Context
  private readonly entries = new Map<string, Entry>()
  /** Imports of bundled row modules in flight (an out-of-tree row's import waits for them). */
  private readonly bundledImports = new Set<Promise<unknown>>()
  private readonly options: MounterOptions

  constructor(options: MounterOptions) {
    this.options = options
    this.root = options.root
  }

  /**
   * Makes the tree match `rows`: disposes rows that are gone, disabled or changed
   * (name or config), then mounts new and changed rows in order, then waits for
   * the tree to settle. Unchanged rows are left alone.
   */
  async apply(rows: readonly ComposedRow[]): Promise<ApplyResult> {
    const changed = rows.filter((r) => this.entries.get(r.row.id)?.signature !== signature(r))
    // Imports run in parallel, before anything is touched; plugins load one by one in row order.
    const memo = resolveMemo()
    const loaded = new Map(await Promise.all(changed.map(async (row) => [row.row.id, row.row.disabled ? undefined : await this.preflight(row, memo)] as const)))
    const refused = changed.flatMap((row) => {
      const plugin = loaded.get(row.row.id)
      return plugin instanceof DshError && !row.row.optional ? [this.status({ composed: row, signature: '', error: plugin })] : []
    })
    if (refused.length) throw bootFailed(refused, 'nothing was started or changed')
    const next = new Map(rows.map((r) => [r.row.id, r] as const))
    const result: ApplyResult = { added: [], removed: [], remounted: [] }
    for (const [id, entry] of [...this.entries].reverse()) {
      const row = next.get(id)
      if (row && signature(row) === entry.signature) { entry.composed = row; continue }
      if (entry.fiber) await entry.fiber.dispose()
      this.entries.delete(id)
      const was = !entry.composed.row.disabled
      const now = row !== undefined && !row.row.disabled
      if (was && now) result.remounted.push(id)
      else if (was) result.removed.push(id)
      else if (now) result.added.push(id)
    }
    const toMount = rows.filter((r) => !this.entries.has(r.row.id))
    for (const row of toMount) {
      const id = row.row.id
      if (!row.row.disabled && !result.added.includes(id) && !result.remounted.includes(id)) result.added.push(id)
    }
    for (const row of toMount) {
      const entry: Entry = { composed: row, signature: signature(row) }
      this.entries.set(row.row.id, entry)
      const plugin = loaded.get(row.row.id)
      if (plugin instanceof DshError) entry.error = plugin
      else if (plugin) await this.mount(entry, plugin.plugin)
      if (!row.row.optional && this.status(entry).state === 'failed') break
    }
    this.reorder(rows)
    await this.settle()
    const failed = this.statuses().filter((s) => s.state === 'failed' && !s.optional)
    if (failed.length) throw bootFailed(failed, 'the run stops (rows after the first failure were not mounted)')
    return result
  }

  /** Resolves, imports and validates a row's config; the failure as a DshError. */
  private async preflight(row: ComposedRow, memo: ResolveMemo): Promise<{ plugin: PluginLike } | DshError> {
    try {
      const plugin = await this.load(row, memo)
      const issues = validate(plugin, row.row.config ?? {})
      if (issues?.length) return configError(row.row.id, row.row.name, rowFiles(row), issues)
      return { plugin }
    } catch (error) {
      return pluginError('IMPORT_FAILED', `row ${row.row.id}`, error)
    }
  }

  /** The state of every row, in composition order. */
  statuses(): RowStatus[] {
    return [...this.entries.values()].map((entry) => this.status(entry))
  }

  /** True when every enabled row is active (a failed optional row aside). */
  healthy(): boolean {
    return this.statuses().every((s) => s.state === 'active' || s.state === 'disabled' || (s.state === 'failed' && s.optional))
  }

  /** The fiber of row `id`, if it is mounted. */
  fiber(id: string): Fiber | undefined {
    return this.entries.get(id)?.fiber
  }

  /** The error of a failed row (for DSH_DEBUG stack traces). */
  error(id: string): unknown {
    const entry = this.entries.get(id)
    return entry?.error ?? (entry?.fiber ? fiberError(entry.fiber) : undefined)
  }

  /** Disposes every mounted row, last first. */
  async dispose(): Promise<void> {
    for (const entry of [...this.entries.values()].reverse()) {
      if (entry.fiber) await entry.fiber.dispose()
    }
    this.entries.clear()
  }

  /** Waits until no row fiber has a load/unload transition in flight. */
  async settle(): Promise<void> {
    for (let round = 0; round < 1000; round++) {
      const busy = this.fibers().filter((f) => f.inertia !== undefined)
      if (!busy.length) {
        await new Promise((r) => setImmediate(r))
        if (!this.fibers().some((f) => f.inertia !== undefined)) return
        continue
      }
      await Promise.allSettled(busy.map((f) => f.await()))
    }
  }

  private fibers(): Fiber[] {
    return [...this.entries.values()].flatMap((e) => (e.fiber ? [e.fiber] : []))
  }

  private async load(row: ComposedRow, memo: ResolveMemo): Promise<PluginLike> {
    const { id, name } = row.row
    let path: string
    try {
      path = resolveModule(name, {
        searchDirs: [this.options.searchDirs[0] ?? row.nameFrom, row.nameFrom, ...this.options.searchDirs.slice(1)],
        base: row.nameFrom,
        memo,
        ...(this.options.conditions ? { conditions: this.options.conditions } : {}),
      })
    } catch (error) {
      throw pluginError('MODULE_NOT_FOUND', `row ${id}`, error)
    }
    let mod: unknown
    try {
      const importModule = this.options.importModule ?? importExternal
      // from the bundle, an in-tree row imports its bundled copy; any other module first gets the shared-module hook
      const url = bundledUrl(path)
      if (url !== undefined) {
        const importing = (this.options.importModule ?? importBundled)(url)
        this.bundledImports.add(importing)
        mod = await importing.finally(() => this.bundledImports.delete(importing))
      } else {
        // the hook routes every later import through a loader thread: start it after the in-tree rows' imports
        if (bundleActive()) await null
        await Promise.allSettled([...this.bundledImports])
        shareBundle()
        mod = await importModule(pathToFileURL(path).href)
      }
    } catch (error) {
      throw pluginError('IMPORT_FAILED', `cannot import ${path}`, error)
    }
    const plugin = pickPlugin(mod)
    if (!plugin) throw new DshError('PLUGIN_INVALID', `${path} exports no plugin (expected \`apply(ctx, config)\`, or a default export with one)`, { data: { path } })
    return plugin
  }

  private async mount(entry: Entry, plugin: PluginLike): Promise<void> {
    const { id } = entry.composed.row
    const config = entry.composed.row.config ?? {}
    try {
      const ctx = this.root.intercept('logger', { name: id })
      const loading = ctx.plugin(plugin as never, config as never)
      entry.fiber = loading.ctx.fiber // the fiber itself, not the thenable wrapper
      await loading
    } catch (error) {
      if (!entry.fiber) entry.error = pluginError('PLUGIN_INVALID', `row ${id}`, error)
    }
  }

  private status(entry: Entry): RowStatus {
    const { id, name, disabled, optional } = entry.composed.row
    const base = { id, name, files: rowFiles(entry.composed), ...(optional ? { optional: true as const } : {}) }
    if (disabled) return { ...base, state: 'disabled' }
    if (entry.error) return { ...base, state: 'failed', reason: reasonOf(entry.error) }
    const fiber = entry.fiber
    if (!fiber) return { ...base, state: 'failed', reason: 'NOT_MOUNTED: the row was not mounted' }
    switch (fiber.state as number) {
      case ACTIVE: return { ...base, state: 'active' }
      case FAILED: return { ...base, state: 'failed', reason: reasonOf(this.describeFailure(entry, fiberError(fiber))) }
      case LOADING: case UNLOADING: return { ...base, state: 'loading' }
      case PENDING: {
        const waitingFor = Object.keys(fiber.inject).filter((s) => this.root.get(s, false) === undefined)
        return { ...base, state: 'pending', waitingFor }
      }
      default: return { ...base, state: 'failed', reason: 'DISPOSED: the row was disposed' }
    }
  }

  private describeFailure(entry: Entry, error: unknown): DshError {
    const { id, name } = entry.composed.row
    if (error instanceof Error && error.name === 'ValidationError') return fromValidationError(error, id, name, rowFiles(entry.composed))
    return pluginError('PLUGIN_FAILED', `row ${id} (${name}) failed to start`, error)
  }

  /** Keeps entries in composition order (statuses and snapshots list rows that way). */
  private reorder(rows: readonly ComposedRow[]): void {
    const sorted = rows.flatMap((r) => { const e = this.entries.get(r.row.id); return e ? [[r.row.id, e] as const] : [] })
    this.entries.clear()
    for (const [id, e] of sorted) this.entries.set(id, e)
  }
}

/** BOOT_FAILED carrying the failed rows' statuses (`data.rows`). */
function bootFailed(rows: RowStatus[], what: string): DshError {
  return new DshError('BOOT_FAILED', `${rows.length === 1 ? 'row' : 'rows'} ${rows.map((r) => r.id).join(', ')} failed to load; ${what}`, {
    hint: 'fix the rows named above, or mark a row you can do without `optional: true` in a patch file',
    data: { rows: rows.map(({ id, name, reason, files }) => ({ id, name, reason, files })) },
  })
}

/** Identity of a mount: a change of module or config means re-mount. */
function signature(row: ComposedRow): string {
  return JSON.stringify([absoluteName(row), row.row.config ?? null, row.row.disabled === true])
}

/**
 * The plugin a module exports: its namespace when it has `apply`, else its default
 * export (an object with `apply`, a function or a class). An object's `apply` is
 * wrapped in an arrow: cordis calls a constructible `apply` (any `function
 * apply`) with `new`, which would drop a disposer or promise it returns.
 */
function pickPlugin(mod: unknown): PluginLike | undefined {
  const m = mod as Record<string, unknown> | null
  const d = m?.default as Record<string, unknown> | ((...a: unknown[]) => unknown) | undefined
  const obj = m && typeof m.apply === 'function' ? m : d && typeof d === 'object' && typeof d.apply === 'function' ? d : undefined
  if (obj) {
    const apply = obj.apply as (...args: unknown[]) => unknown
    const plugin: Record<string, unknown> = { apply: (ctx: unknown, config: unknown) => apply.call(obj, ctx, config) }
    for (const key of ['name', 'inject', 'Config', 'provide', 'intercept']) if (obj[key] !== undefined) plugin[key] = obj[key]
    return plugin as PluginLike
  }
  if (typeof d === 'function') return d as PluginLike
  return undefined
}

function validate(plugin: PluginLike, config: unknown): readonly SchemaIssue[] | undefined {
  const schema = (plugin as { Config?: unknown }).Config as { '~standard'?: { validate?: (v: unknown) => unknown } } | undefined
  const validator = schema?.['~standard']?.validate
  if (typeof validator !== 'function') return undefined
  const result = validator(config) as { issues?: readonly SchemaIssue[] } | Promise<unknown>
  if (result instanceof Promise) return undefined
  // a key the schema does not know is an error, not silently dropped: a typo or a renamed
  // key must not quietly leave a user's setting unapplied
  const unknown = unknownKeys(schema, config)
  return result.issues?.length || unknown.length ? [...(result.issues ?? []), ...unknown] : undefined
}

/**
 * Keys of `value` that a zod object schema (behind defaults, optionals and pipes) would strip.
 * Objects that declare a catchall (strict ones report extras themselves, loose ones keep
 * them) are left to the schema.
 */
export function unknownKeys(schema: unknown, value: unknown, path: string[] = []): SchemaIssue[] {
  const def = (schema as { _zod?: { def?: Record<string, any> } } | undefined)?._zod?.def
  if (!def || value === null || typeof value !== 'object' || Array.isArray(value)) return []
  switch (def.type) {
    case 'default': case 'prefault': case 'optional': case 'nullable': case 'readonly':
      return unknownKeys(def.innerType, value, path)
    case 'pipe':
      return unknownKeys(def.in, value, path)
    case 'object': {
      if (def.catchall) return []
      const known = Object.keys(def.shape as object)
      const out: SchemaIssue[] = []
      for (const [key, child] of Object.entries(value)) {
        if (known.includes(key)) out.push(...unknownKeys((def.shape as Record<string, unknown>)[key], child, [...path, key]))
        else out.push({ message: `unknown key${didYouMean(key, known)}; known keys: ${known.join(', ') || '(none)'}`, path: [...path, key] })
      }
      return out
    }
  }
  return []
}

function fiberError(fiber: Fiber): unknown {
  return (fiber as unknown as { _error?: unknown })._error
}
