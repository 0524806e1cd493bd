import { describe, expect, it } from 'vitest'
import { TITLE_MAX, promptText, titleFromText } from '../src/titles/titles.js'

describe('titleFromText', () => {
  it('takes the first non-empty line, cleaned', () => {
    expect(titleFromText('\n\n   Fix   the failing   test in parser.ts  \nmore detail')).toBe('Fix the failing test in parser.ts')
    expect(titleFromText('# Add a --json flag')).toBe('Add a --json flag')
    expect(titleFromText('> - "Why does CI fail?"')).toBe('Why does CI fail?')
    expect(titleFromText('\t\n \n')).toBeUndefined()
    expect(titleFromText('###')).toBeUndefined()
  })

  it('cuts long lines at a word boundary with an ellipsis, never over the limit', () => {
    const long = 'Refactor the session manager so that forks copy events lazily and the store reads them on demand'
    const title = titleFromText(long)!
    expect(title).toBe('Refactor the session manager so that forks copy events…')
    expect([...title].length).toBeLessThanOrEqual(TITLE_MAX)
    const word = 'x'.repeat(100)
    expect(titleFromText(word)).toBe(`${'x'.repeat(TITLE_MAX - 1)}…`)
    expect(titleFromText('a'.repeat(60))).toBe('a'.repeat(60))
    // the cut falls exactly at the end of a word: that word stays
    expect(titleFromText('Why does the parser drop the last token when the input ends without a newline?'))
      .toBe('Why does the parser drop the last token when the input ends…')
    expect(titleFromText('Why, oh why, does this extremely long question end with a comma, here?')).toBe('Why, oh why, does this extremely long question end with a…')
  })

  it('reads only the text parts of a prompt', () => {
    expect(promptText([{ type: 'image', mimeType: 'image/png', data: 'AAAA' }, { type: 'text', text: 'what is this' }])).toBe('\nwhat is this')
  })
})
