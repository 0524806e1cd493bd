/**
 * Request bodies as JSON text joined from cached pieces (shared by the provider adapters).
 *
 * Contract: `FrozenJsonCache.text(key, build)` is `JSON.stringify(build(key))` ('' when that
 * is undefined, i.e. `build` returned undefined: nothing to send); the text is kept
 * per key object (weakly) only when the key is frozen, so a cached text can never go stale —
 * a history message the session deriver handed out is frozen with its content and keeps its
 * identity while it is in the history. An unfrozen key is serialised on every call.
 * `joinJsonObject(before, key, items, after)` is the JSON text of an object whose properties
 * are `before`'s, then `key` with the array whose elements' JSON texts are `items`, then
 * `after`'s — byte-identical to `JSON.stringify` of that object built whole.
 */

export class FrozenJsonCache<K extends object> {
  private readonly texts = new WeakMap<K, string>()

  text(key: K, build: (key: K) => unknown): string {
    if (!Object.isFrozen(key)) return stringify(build(key))
    let text = this.texts.get(key)
    if (text === undefined) {
      text = stringify(build(key))
      this.texts.set(key, text)
    }
    return text
  }
}

function stringify(value: unknown): string {
  return (JSON.stringify(value) as string | undefined) ?? ''
}

/** The inside of an object's JSON text, without its braces ('' for no properties). */
function members(value: object): string {
  return JSON.stringify(value).slice(1, -1)
}

export function joinJsonObject(before: object, key: string, items: readonly string[], after: object): string {
  const head = members(before)
  const tail = members(after)
  return `{${head}${head === '' ? '' : ','}${JSON.stringify(key)}:[${items.join(',')}]${tail === '' ? '' : ','}${tail}}`
}
