import { z } from 'zod'

/**
 * Process-wide: zod parses objects by interpreting the schema instead of compiling a
 * fast path (`new Function`) on each object schema's first parse. The launcher calls this
 * before any row mounts: most schemas of a run (row configs, tool arguments, host params)
 * are parsed a handful of times, so the compile costs more than it saves (decision 0064).
 */
export function interpretSchemas(): void {
  z.config({ jitless: true })
}
