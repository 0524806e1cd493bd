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

/** The methods of each seam (the routing table). */
const METHODS: { [K in SeamName]: readonly (keyof World[K])[] } = {
  fs: ['resolve', 'stat', 'lstat', 'readFile', 'readdir', 'realpath', 'checkWrite', 'write', 'mkdir'],
  subprocess: ['run'],
  shell: ['run', 'start', 'output', 'kill', 'jobs', 'killAll'],
}

/**
 * The registered value of a local seam: an object deriving from `local` whose seam
 * methods call the current world's provider of `name`, or `local` outside any world. So
 * no caller of `ctx.fs` / `ctx.subprocess` / `ctx.shell` knows which world it acts on.
 * (Own properties, not a Proxy: cordis reads methods by property descriptor.)
 */
export function routed<T extends object>(name: SeamName, local: T): T {
  const self = Object.create(local) as Record<string, unknown>
  for (const method of METHODS[name] as readonly string[]) {
    const own = (local as Record<string, (...args: unknown[]) => unknown>)[method]!
    self[method] = function (this: unknown, ...args: unknown[]) {
      const world = current.getStore()
      if (!world) return own.apply(this, args)
      const provider = world[name] as unknown as Record<string, (...a: unknown[]) => unknown>
      return provider[method]!(...args)
    }
  }
  return self as T
}
