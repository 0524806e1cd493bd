import type { Context, EffectMeta, Fiber } from '@deepseek-ai/cordis'
import type { Mounter, RowStatus } from './mounter.js'

/**
 * A JSON view of the live tree, for `DSH_TREE_REPORT` and tests: each row's
 * state, the services its fiber (or a fiber below it) provides, the labels of
 * its live effects, and the listeners it registered; plus every service and
 * non-internal listener of the whole tree. Disposed rows vanish from all of it.
 */
export interface TreeSnapshot {
  rows: RowSnapshot[]
  services: string[]
  listeners: Record<string, number>
}

export interface RowSnapshot extends RowStatus {
  provides: string[]
  effects: EffectLabel[]
  listeners: Record<string, number>
}

export interface EffectLabel {
  label: string
  children?: EffectLabel[]
}

export function snapshotTree(root: Context, mounter: Mounter): TreeSnapshot {
  const impls = Reflect.ownKeys(root.reflect.store).map((k) => root.reflect.store[k as symbol]!)
  const hooks = Object.entries(root.events._hooks).flatMap(([event, list]) => list.map((h) => ({ event, fiber: h.ctx.fiber })))
  const rows = mounter.statuses().map((status): RowSnapshot => {
    const fiber = mounter.fiber(status.id)
    const mine = (f: Fiber) => fiber !== undefined && isWithin(f, fiber)
    return {
      ...status,
      provides: impls.filter((i) => mine(i.fiber)).map((i) => i.name).sort(),
      effects: fiber && fiber.uid !== null ? fiber.getEffects().map(label) : [],
      listeners: count(hooks.filter((h) => mine(h.fiber) && !h.event.startsWith('internal/')).map((h) => h.event)),
    }
  })
  return {
    rows,
    services: impls.map((i) => i.name).sort(),
    listeners: count(hooks.filter((h) => !h.event.startsWith('internal/')).map((h) => h.event)),
  }
}

/** True when `fiber` is `ancestor` or was loaded (directly or not) inside it. */
function isWithin(fiber: Fiber, ancestor: Fiber): boolean {
  let f: Fiber = fiber
  for (;;) {
    if (f === ancestor) return true
    const parent = f.parent.fiber
    if (parent === f || !f.runtime) return false
    f = parent
  }
}

function label(meta: EffectMeta): EffectLabel {
  return meta.children.length ? { label: meta.label, children: meta.children.map(label) } : { label: meta.label }
}

function count(names: string[]): Record<string, number> {
  const out: Record<string, number> = {}
  for (const n of names.sort()) out[n] = (out[n] ?? 0) + 1
  return out
}
