import { describe, expect, it } from 'vitest'
import { binaryNote, outputText } from '../src/shell/text.js'

describe('outputText', () => {
  it('text stays text: real U+FFFD characters, NUL-separated names (find -print0), escapes, a few stray bytes', () => {
    const replacement = Buffer.from('a \uFFFD b \uFFFD c \uFFFD d \uFFFD e \uFFFD\n')
    expect(outputText(replacement)).toBe('a \uFFFD b \uFFFD c \uFFFD d \uFFFD e \uFFFD\n')
    expect(outputText(Buffer.from('./a.txt\0./b c.txt\0./d\0'))).toBe('./a.txt\0./b c.txt\0./d\0')
    expect(outputText(Buffer.from('\x1b[31mred\x1b[0m\tx\r\n'))).toBe('\x1b[31mred\x1b[0m\tx\r\n')
    const stray = Buffer.concat([Buffer.from('x'.repeat(100)), Buffer.from([0xe9, 0xe8, 0xff, 0xfe, 0xfd])])
    expect(outputText(stray)).toBe(`${'x'.repeat(100)}\uFFFD\uFFFD\uFFFD\uFFFD\uFFFD`)
  })

  it('bytes a tenth or more odd (and at least four) are one line with the size and first bytes in hex', () => {
    const bytes = Buffer.from(Array.from({ length: 40 }, (_, i) => (i * 37 + 128) % 256))
    expect(binaryNote(bytes)).toBe(`[binary output: 40 bytes, not text; first bytes: ${[...bytes.subarray(0, 32)].map((b) => b.toString(16).padStart(2, '0')).join(' ')} …; view it with xxd or od, or write it to a file]`)
    expect(binaryNote(Buffer.from([1, 2, 3]))).toBeUndefined()
    expect(binaryNote(Buffer.from([1, 2, 3, 4]))).toBe('[binary output: 4 bytes, not text; first bytes: 01 02 03 04; view it with xxd or od, or write it to a file]')
    expect(binaryNote(Buffer.from([0xff, 0xfe, 0xfd, 0xfc]), true)).toBe('[binary output, not text; its last 4 bytes start with: ff fe fd fc; view it with xxd or od, or write it to a file]')
  })
})
