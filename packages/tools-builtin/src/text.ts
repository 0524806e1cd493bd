/** Small pure text helpers shared by the tools. */

/** A fenced Markdown block whose fence is longer than any backtick run inside `text`. */
export function fence(text: string, info = ''): string {
  let longest = 0
  for (const m of text.matchAll(/`+/g)) longest = Math.max(longest, m[0].length)
  const ticks = '`'.repeat(Math.max(3, longest + 1))
  return `${ticks}${info}\n${text}\n${ticks}`
}

/** `cat -n` style: the line number right-aligned in 6 columns, a tab, the line. */
export function numberLine(n: number, line: string): string {
  return `${String(n).padStart(6)}\t${line}`
}

/** Lines of `text` with a trailing newline not producing an empty last line; `\r\n` endings are dropped to `\n`. */
export function splitLines(text: string): string[] {
  if (text === '') return []
  const lines = text.split('\n')
  if (lines.at(-1) === '') lines.pop()
  return lines.map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l))
}

/** Orders directory entries by name, code-unit order (as `ls` in the C locale). */
export function byName(a: { name: string }, b: { name: string }): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0
}

export function plural(n: number, word: string, many = `${word}s`): string {
  return `${n} ${n === 1 ? word : many}`
}

/** Detects binary content: a NUL byte in the first 8 KB, or invalid UTF-8. */
export function isBinary(bytes: Uint8Array): boolean {
  const head = bytes.subarray(0, 8192)
  if (head.includes(0)) return true
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes)
    return false
  } catch {
    return true
  }
}

const MAGIC: [string, number[]][] = [
  ['a PNG image', [0x89, 0x50, 0x4e, 0x47]],
  ['a JPEG image', [0xff, 0xd8, 0xff]],
  ['a GIF image', [0x47, 0x49, 0x46, 0x38]],
  ['a PDF document', [0x25, 0x50, 0x44, 0x46]],
  ['an ELF executable', [0x7f, 0x45, 0x4c, 0x46]],
  ['a ZIP archive', [0x50, 0x4b, 0x03, 0x04]],
  ['a gzip archive', [0x1f, 0x8b]],
  ['a WebAssembly module', [0x00, 0x61, 0x73, 0x6d]],
]

/** What kind of binary file this looks like, when its magic bytes are known. */
export function binaryKind(bytes: Uint8Array): string | undefined {
  for (const [kind, magic] of MAGIC) if (magic.every((b, i) => bytes[i] === b)) return kind
  return undefined
}

/** Relative to `base` when inside it (POSIX separators), else absolute. */
export function displayPath(base: string, abs: string): string {
  if (abs === base) return '.'
  const prefix = base.endsWith('/') ? base : `${base}/`
  return abs.startsWith(prefix) ? abs.slice(prefix.length) : abs
}
