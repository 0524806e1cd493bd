import { DshError, isDshError } from '@dsh/protocol'

/** Bytes shown in hex at the start of binary output. */
const HEX_BYTES = 32

/**
 * Output bytes as the model reads them. UTF-8 text (a few stray bytes included: each reads
 * U+FFFD) is decoded; bytes that are mostly not text (`binaryNote`) become one line saying so.
 */
export function outputText(buf: Buffer): string {
  return binaryNote(buf) ?? buf.toString('utf8')
}

/**
 * For bytes that are not text — a tenth or more, and at least four, are outside UTF-8 or
 * are control bytes other than tab, newlines, backspace, form feed, escape and NUL — one
 * line saying so with the first bytes in hex (of the kept end with `tail`) (a run of U+FFFD tells the model nothing and
 * costs tokens); undefined for text.
 */
export function binaryNote(buf: Buffer, tail = false): string | undefined {
  const odd = oddBytes(buf)
  if (odd < 4 || odd * 10 < buf.length) return undefined
  const hex = [...buf.subarray(0, HEX_BYTES)].map((b) => b.toString(16).padStart(2, '0')).join(' ') + (buf.length > HEX_BYTES ? ' …' : '')
  const what = tail ? `binary output, not text; its last ${buf.length} bytes start with: ${hex}` : `binary output: ${buf.length} bytes, not text; first bytes: ${hex}`
  return `[${what}; view it with xxd or od, or write it to a file]`
}

/** Bytes of invalid UTF-8 (each U+FFFD the decoder made, less the real U+FFFD characters) plus odd control bytes. */
function oddBytes(buf: Buffer): number {
  const text = buf.toString('utf8')
  let replaced = 0
  for (let i = text.indexOf('\uFFFD'); i !== -1; i = text.indexOf('\uFFFD', i + 1)) replaced++
  let real = 0
  for (let i = buf.indexOf('\uFFFD'); i !== -1; i = buf.indexOf('\uFFFD', i + 3)) real++
  let controls = 0
  for (const b of buf) if (b < 0x20 && b !== 0 && b !== 0x08 && b !== 0x09 && b !== 0x0a && b !== 0x0b && b !== 0x0c && b !== 0x0d && b !== 0x1b) controls++
  return replaced - real + controls
}

/** Linux's limit on one argument (MAX_ARG_STRLEN): a bash command longer than this cannot start. */
const MAX_ARG_BYTES = 128 * 1024

/**
 * A command bash cannot be given, refused before anything runs, named as the caller wrote
 * it (not as the n-th argument of a sandbox's command line): a NUL byte.
 */
export function checkCommand(command: string): void {
  const at = command.indexOf('\0')
  if (at >= 0) {
    throw new DshError('SPAWN_FAILED', `The command contains a NUL byte (character ${at + 1} of ${command.length}); a command line cannot carry one (it ends C strings), so it did not run.`, {
      hint: 'write the byte with printf \'\\0\' or $\'\\x00\' in the command, or put the data in a file first',
    })
  }
}

/** A spawn failure with what it means for `command`: E2BIG (argument list too long) says how long the command is and what to do. */
export function explainSpawnError(error: unknown, command: string): unknown {
  if (!isDshError(error) || (error.data as { errno?: string } | undefined)?.errno !== 'E2BIG') return error
  const bytes = Buffer.byteLength(command)
  const why = bytes > MAX_ARG_BYTES
    ? `the command is ${bytes} bytes and Linux takes at most ${MAX_ARG_BYTES} in one argument`
    : 'the command and its environment together pass the system\'s limit for a new program\'s arguments'
  return new DshError('SPAWN_FAILED', `The command did not start: argument list too long (E2BIG): ${why}.`, {
    cause: error,
    hint: 'write the long part (a script, data, a heredoc) to a file with the write tool and run or read that file from a short command',
    data: { errno: 'E2BIG' },
  })
}
