// Writes packages/host-api/README.md, the method table reference, from the schemas
// (describeRpc of the built @dsh/host-api). `--check` exits 1 when the file is stale.
// Run after `npm run build`: node scripts/gen-host-api-docs.mjs [--check]
import { readFileSync, writeFileSync, existsSync } from 'node:fs'
import { describeRpc } from '../packages/host-api/dist/index.js'

const FILE = new URL('../packages/host-api/README.md', import.meta.url)

function typeOf(s) {
  if (!s || typeof s !== 'object') return 'any'
  if ('const' in s) return JSON.stringify(s.const)
  if (s.enum) return s.enum.map((v) => JSON.stringify(v)).join(' \\| ')
  const union = s.anyOf ?? s.oneOf
  if (union) return union.map(typeOf).join(' \\| ')
  if (s.type === 'array') return `${typeOf(s.items)}[]`
  if (s.type === 'object') return s.properties ? `{${Object.keys(s.properties).join(', ')}}` : 'object'
  if (Array.isArray(s.type)) return s.type.join(' \\| ')
  return s.type ?? 'any'
}

function fields(schema) {
  const props = Object.entries(schema.properties ?? {})
  if (!props.length) return '—'
  const required = new Set(schema.required ?? [])
  return props.map(([k, v]) => `\`${k}${required.has(k) ? '' : '?'}\`: ${typeOf(v)}`).join(', ')
}

const escape = (text) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ')

export function render(described = describeRpc()) {
  const row = (m, carriers) => `| \`${m.name}\` |${carriers ? ` ${m.carriers.join(', ')} |` : ''} ${escape(m.description)} | ${fields(m.params)} | ${fields(m.result)} |`
  return [
    '# @dsh/host-api — the method table',
    '',
    'Generated from the zod schemas by `node scripts/gen-host-api-docs.mjs` (do not edit by hand; a test fails when it is stale).',
    `Protocol version ${described.protocolVersion}. \`rpc/describe\` (and \`dsh sdk --print-schema\`) returns the full JSON Schemas.`,
    'Errors: -32700 not JSON (id null), -32600 invalid request or before `initialize`, -32601 unknown method,',
    '-32602 invalid params (`data.issues`: path + message), -32002 unknown session, -32000 a host rule refused (`data.code`).',
    '',
    '## Methods (client → server)',
    '',
    '| method | carriers | what it does | params | result |',
    '|---|---|---|---|---|',
    ...described.methods.map((m) => row(m, true)),
    '',
    '## Server → client requests (answered by the session\'s owner)',
    '',
    '| method | what it asks | params | answer |',
    '|---|---|---|---|',
    ...described.clientRequests.map((m) => row(m, false)),
    '',
    '## Notifications (server → client)',
    '',
    '| method | what it says | params | |',
    '|---|---|---|---|',
    ...described.notifications.map((m) => `| \`${m.name}\` | ${escape(m.description)} | ${fields(m.params)} | |`),
    '',
  ].join('\n')
}

const text = render()
if (process.argv.includes('--check')) {
  const current = existsSync(FILE) ? readFileSync(FILE, 'utf8') : ''
  if (current !== text) {
    console.error('packages/host-api/README.md is stale: run node scripts/gen-host-api-docs.mjs')
    process.exit(1)
  }
} else {
  writeFileSync(FILE, text)
  console.log(`wrote ${FILE.pathname}`)
}
