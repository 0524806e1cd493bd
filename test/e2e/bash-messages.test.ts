import { describe, expect, it } from 'vitest'
import { useDshWorld } from './helpers/world.js'

// What the model reads back from bash when the command or its output is not plain text.
const world = useDshWorld({ logsCheck: true })

/** Runs one headless turn whose bash calls are `commands`; returns the tool results the model read, in order. */
async function toolResults(commands: string[]): Promise<string[]> {
  world.model.setScript([
    ...commands.map((command) => ({ toolCalls: [{ name: 'bash', arguments: { command } }] })),
    { text: 'done' },
  ])
  const result = await world.headless(['go'])
  expect(result.code, result.stderr).toBe(0)
  const last = world.model.requests.at(-1)!.body as { messages: { role: string; content: string }[] }
  return last.messages.filter((m) => m.role === 'tool').map((m) => m.content)
}

describe('bash messages the model reads', () => {
  it('a NUL byte in the command is named where the model wrote it, not as an argument of the sandbox\'s command line', async () => {
    const [nul] = await toolResults(['echo a\0b'])
    expect(nul).toContain('The command contains a NUL byte (character 7 of 8)')
    expect(nul).not.toMatch(/argument \d+/)
  })

  it('a command over 128 KiB is E2BIG with its size and a way out', async () => {
    const [big] = await toolResults([`echo ${'x'.repeat(200_000)} | wc -c`])
    expect(big).toContain('argument list too long (E2BIG): the command is 200013 bytes and Linux takes at most 131072 in one argument')
    expect(big).toContain('write the long part')
  })

  it('binary output is one honest line with its size and first bytes; text with a stray byte stays readable; a long binary stream is kept whole in the spill file', async () => {
    const [png, latin, long, kept] = await toolResults([
      'printf \'\\x89PNG\\r\\n\\x1a\\n\\x00\\x00\\x00\\rIHDR\\x00\\x00\\x01\\x00\\xff\\xfe\\xfd\\xfc\\xfb\\xfa\\xf9\\xf8\\xf7\'',
      'printf \'caf\\xe9 cr\\xe8me\\n\'',
      'head -c 300000 /dev/zero | tr \'\\0\' \'\\377\'',
      // the spill file (in the session's temp root, removed when the session closes): its size, and bytes other than 0xff
      'for f in "$TMPDIR"/dsh-bash-*.log; do wc -c < "$f"; tr -d \'\\377\' < "$f" | wc -c; done',
    ])
    expect(png).toBe('[binary output: 29 bytes, not text; first bytes: 89 50 4e 47 0d 0a 1a 0a 00 00 00 0d 49 48 44 52 00 00 01 00 ff fe fd fc fb fa f9 f8 f7; view it with xxd or od, or write it to a file]')
    expect(latin).toBe('caf\uFFFD cr\uFFFDme')
    const lines = long!.split('\n')
    expect(lines[0]).toMatch(/^\[binary output, not text; its last \d+ bytes start with: (ff ){31}ff …; view it with xxd or od, or write it to a file\]$/)
    expect(lines[1]).toMatch(/^\[output truncated: showing the last 1 of 1 lines \(300000 bytes\); full output: .+\/dsh-bash-[^/]+\.log\]$/)
    expect(lines).toHaveLength(2)
    expect(kept).toBe('300000\n0')
  })
})
