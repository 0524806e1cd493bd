import { CLIENT_REQUESTS, METHODS, NOTIFICATIONS, type MethodDef } from '@dsh/host-api'
import { readFileSync, writeFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'

const README = new URL('../../host-api/README.md', import.meta.url)
const START = '<!-- table:start (generated from the schemas by packages/host/test/readme.test.ts; UPDATE_README=1 rewrites it) -->'
const END = '<!-- table:end -->'

function fields(def: MethodDef): string {
  const shape = (def.params as unknown as { shape?: Record<string, { isOptional?(): boolean }> }).shape
  if (!shape) return '—'
  const keys = Object.entries(shape).map(([k, s]) => (s.isOptional?.() ? `${k}?` : k))
  return keys.length ? keys.map((k) => `\`${k}\``).join(', ') : '—'
}

function section(title: string, table: Record<string, MethodDef>, carriers: boolean): string {
  const rows = Object.entries(table).map(([name, d]) =>
    `| \`${name}\` | ${fields(d)} | ${d.description.replace(/\|/g, '\\|')}${carriers && d.carriers.length < 2 ? ` (${d.carriers.join(', ')} only)` : ''} |`)
  return [`### ${title}`, '', '| Name | Params | What it does |', '|---|---|---|', ...rows].join('\n')
}

function generated(): string {
  return [START, section('Methods (client → server)', METHODS, true), '', section('Requests (server → client)', CLIENT_REQUESTS, false), '',
    section('Notifications (server → client)', NOTIFICATIONS, false), END].join('\n')
}

describe('the host-api README', () => {
  it('lists every method, request and notification as the schemas define them', () => {
    const text = readFileSync(README, 'utf8')
    const from = text.indexOf(START)
    const to = text.indexOf(END)
    const current = from >= 0 && to > from ? text.slice(from, to + END.length) : ''
    if (process.env.UPDATE_README && current !== generated()) {
      writeFileSync(README, from >= 0 ? text.slice(0, from) + generated() + text.slice(to + END.length) : `${text.trimEnd()}\n\n${generated()}\n`)
      return
    }
    expect(current).toBe(generated())
  })
})
