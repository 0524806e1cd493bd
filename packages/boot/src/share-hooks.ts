/**
 * Module resolve hook of the bundled build (decision 0060), registered by `shareBundle`
 * (bundled.ts) in the loader thread. A bare specifier listed in `shared` (`@dsh/<pkg>`,
 * `@dsh/<pkg>/<plugin>`, `@deepseek-ai/cordis`) resolves to its bundle file, whoever imports
 * it; any other `@dsh/` name is not found; everything else resolves as Node would.
 */
interface Data { shared: Record<string, string> }
interface Resolved { url: string; shortCircuit?: boolean; format?: string | null }
type Next = (specifier: string, context: unknown) => Promise<Resolved>

let shared: Record<string, string> = {}

export function initialize(data: Data): void {
  shared = data.shared
}

export async function resolve(specifier: string, context: unknown, next: Next): Promise<Resolved> {
  const url = Object.hasOwn(shared, specifier) ? shared[specifier] : undefined
  if (url !== undefined) return { url, format: 'module', shortCircuit: true }
  // the @dsh scope is dsh's own: a name the bundle lacks is not found, whatever a profile holds
  if (specifier.startsWith('@dsh/')) throw Object.assign(new Error(`${specifier} is not a module of this build of dsh`), { code: 'ERR_MODULE_NOT_FOUND' })
  return next(specifier, context)
}
