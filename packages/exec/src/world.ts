import { AsyncLocalStorage } from 'node:async_hooks'
import type { FsSeam } from './fs/types.js'
import type { ShellSeam } from './shell/types.js'
import type { SubprocessSeam } from './subprocess/types.js'

/**
 * An execution world: the providers of the three seams for the calls made inside it.
 * The local providers are the world outside any `inWorld` call.
 */
export interface World {
  /** e.g. `ssh://user@host:22/root`; shown in /status. */
  readonly id: string
  readonly fs: FsSeam
  readonly subprocess: SubprocessSeam
  readonly shell: ShellSeam
}

type SeamName = 'fs' | 'subprocess' | 'shell'

const current = new AsyncLocalStorage<World>()

/** Runs `body` (and everything it starts asynchronously) in `world`. */
export function inWorld<T>(world: World, body: () => T): T {
  return current.run(world, body)
}

/** The world of the running async context, or undefined for the local one. */
export function currentWorld(): World | undefined {
  return current.getStore()
}

/**
 * The registered value of a local seam: a proxy that sends each method call to the
 * current world's provider of `name`, or to `local` outside any world. So no caller of
 * `ctx.fs` / `ctx.subprocess` / `ctx.shell` knows which world it acts on. Symbol keys
 * (cordis bookkeeping) always reach `local`.
 */
export function routed<T extends object>(name: SeamName, local: T): T {
  return new Proxy(local, {
    get(target, prop, receiver) {
      const world = current.getStore()
      if (!world || typeof prop !== 'string') return Reflect.get(target, prop, receiver) as unknown
      const provider = world[name] as unknown as Record<string, unknown>
      const value = provider[prop]
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(provider) : value
    },
  })
}
