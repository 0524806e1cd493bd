/** One POSIX shell word: `'…'` with embedded quotes spliced (`'\''`). Pure. */
export function shq(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`
}
