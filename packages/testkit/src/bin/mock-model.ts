#!/usr/bin/env node
/**
 * `mock-model --script FILE [--port N] [--host H]`: serves the scripted mock model until
 * SIGINT/SIGTERM. Prints the URL and how to point dsh at it on stdout; one line per request
 * on stderr. Exit 2 on bad arguments or an invalid script.
 */
import { parseArgs } from 'node:util'
import { loadScript } from '../mock-model/script.js'
import { startMockModel } from '../mock-model/server.js'

const USAGE = 'usage: mock-model --script FILE [--port N] [--host H]'

async function main(): Promise<number> {
  let values: { script?: string | undefined; port?: string | undefined; host?: string | undefined; help?: boolean | undefined }
  try {
    values = parseArgs({
      options: { script: { type: 'string' }, port: { type: 'string' }, host: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
      strict: true,
    }).values
  } catch (error) {
    process.stderr.write(`mock-model: ${error instanceof Error ? error.message : String(error)}\n${USAGE}\n`)
    return 2
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`)
    return 0
  }
  if (!values.script) {
    process.stderr.write(`mock-model: --script FILE is required\n${USAGE}\n`)
    return 2
  }
  const port = values.port === undefined ? 0 : Number(values.port)
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    process.stderr.write(`mock-model: --port must be an integer 0-65535, got "${values.port}"\n`)
    return 2
  }
  let script
  try {
    script = await loadScript(values.script)
  } catch (error) {
    process.stderr.write(`mock-model: ${error instanceof Error ? error.message : String(error)}\n`)
    return 2
  }
  const mock = await startMockModel({
    script, port, ...(values.host === undefined ? {} : { host: values.host }),
    log: (line) => process.stderr.write(`[mock-model] ${line}\n`),
  })
  process.stdout.write(`mock model listening on ${mock.url}\n`)
  process.stdout.write(`point dsh at it: DEEPSEEK_BASE_URL=${mock.url} DEEPSEEK_API_KEY=mock dsh ...\n`)
  process.stdout.write(`(${script.length} scripted step(s); Anthropic clients use the same URL as their base URL)\n`)
  await new Promise<void>((resolve) => {
    process.once('SIGINT', () => resolve())
    process.once('SIGTERM', () => resolve())
  })
  await mock.close()
  process.stderr.write(`[mock-model] stopped after ${mock.requests.length} request(s)\n`)
  return 0
}

process.exitCode = await main()
