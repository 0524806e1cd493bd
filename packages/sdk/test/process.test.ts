import { describe, expect, it } from 'vitest'
import { createClient, resolveCommand, TransportClosedError } from '../src/index.js'

// A stand-in server: answers initialize, then ignores EOF and SIGTERM (so only SIGKILL ends it).
const STUBBORN = `
process.on('SIGTERM', () => process.stderr.write('ignoring SIGTERM\\n'))
process.stdin.on('end', () => process.stderr.write('ignoring EOF\\n'))
let buf = ''
process.stdin.on('data', (d) => {
  buf += d
  const nl = buf.indexOf('\\n')
  if (nl < 0) return
  const msg = JSON.parse(buf.slice(0, nl))
  buf = buf.slice(nl + 1)
  process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result: { protocolVersion: 1, server: { name: 'stub', version: '0' }, capabilities: {} } }) + '\\n')
})
setInterval(() => undefined, 1000)
`

describe('the client process', () => {
  it('walks the close ladder EOF → SIGTERM → SIGKILL for a server that ignores the first two', async () => {
    const client = await createClient({ command: process.execPath, args: ['-e', STUBBORN], closeGraceMs: 300 })
    const pid = client.pid!
    await client.close()
    expect(() => process.kill(pid, 0)).toThrow()
    expect(client.stderrTail()).toContain('ignoring EOF')
    expect(client.stderrTail()).toContain('ignoring SIGTERM')
    await expect(client.call('session/list', {})).rejects.toMatchObject({ name: 'TransportClosedError', signal: 'SIGKILL' })
  })

  it('fails createClient with TransportClosedError when the command cannot start', async () => {
    const error = await createClient({ command: '/nonexistent/dsh' }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(TransportClosedError)
    expect((error as Error).message).toContain('could not start /nonexistent/dsh')
  })

  it('fails createClient with the exit code and stderr tail of a server that dies at start', async () => {
    const error = await createClient({ command: process.execPath, args: ['-e', 'console.error("CONFIG_INVALID: broken patch"); process.exit(3)'] }).catch((e: unknown) => e)
    expect(error).toMatchObject({ name: 'TransportClosedError', exitCode: 3, stderrTail: 'CONFIG_INVALID: broken patch' })
  })

  it('finds dsh as the explicit command, then $DSH_BIN, then this install', () => {
    expect(resolveCommand({ command: '/x/dsh' })).toEqual(['/x/dsh', ['sdk']])
    expect(resolveCommand({ env: { DSH_BIN: '/y/dsh' }, args: ['sdk', '--print-schema'] })).toEqual(['/y/dsh', ['sdk', '--print-schema']])
    const [command, args] = resolveCommand({ env: {} })
    expect(command).toBe(process.execPath)
    expect(args).toEqual([expect.stringMatching(/node_modules\/@dsh\/cli\/bin\/dsh\.js$/), 'sdk'])
  })
})
