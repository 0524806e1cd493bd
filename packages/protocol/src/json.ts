/** JSON values: the only data a session event may carry. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json }
export type JsonObject = { [key: string]: Json }

/**
 * Returns the path and reason of the first non-JSON value inside `value`
 * (undefined, NaN, ±Infinity, BigInt, functions, symbols, class instances,
 * cycles), or undefined when `value` is plain JSON.
 */
export function findNonJson(value: unknown, path = '$', seen = new Set<object>()): string | undefined {
  switch (typeof value) {
    case 'string': case 'boolean': return undefined
    case 'number': return Number.isFinite(value) ? undefined : `${path} is ${value} (not a finite number)`
    case 'undefined': return `${path} is undefined`
    case 'bigint': return `${path} is a BigInt`
    case 'function': return `${path} is a function`
    case 'symbol': return `${path} is a symbol`
    case 'object': {
      if (value === null) return undefined
      if (seen.has(value)) return `${path} is a cycle`
      seen.add(value)
      try {
        if (Array.isArray(value)) {
          for (let i = 0; i < value.length; i++) {
            const bad = findNonJson(value[i], `${path}[${i}]`, seen)
            if (bad) return bad
          }
          return undefined
        }
        const proto = Object.getPrototypeOf(value)
        if (proto !== Object.prototype && proto !== null) {
          return `${path} is an instance of ${(value as object).constructor?.name ?? 'a class'} (only plain objects)`
        }
        for (const key of Object.keys(value)) {
          const bad = findNonJson((value as Record<string, unknown>)[key], `${path}.${key}`, seen)
          if (bad) return bad
        }
        return undefined
      } finally {
        seen.delete(value)
      }
    }
  }
  return `${path} has an unsupported type`
}

/** Deep-freezes a JSON value in place and returns it. */
export function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const child of Object.values(value)) deepFreeze(child)
  }
  return value
}
