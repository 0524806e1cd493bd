import { structuredPatch } from 'diff'

export interface HunkLine { kind: 'add' | 'del' | 'ctx'; oldNo: number | null; newNo: number | null; text: string }
export interface Hunk { header: string; lines: HunkLine[] }

/** Minimal hunks (3 lines of context) with line numbers; a new file is one all-added hunk. */
export function hunksOf(oldText: string | null, newText: string): Hunk[] {
  const patch = structuredPatch('a', 'b', oldText ?? '', newText, '', '', { context: 3 })
  return patch.hunks.map((h) => {
    let o = h.oldStart
    let n = h.newStart
    const lines: HunkLine[] = []
    for (const raw of h.lines) {
      const mark = raw[0]
      const text = raw.slice(1)
      if (mark === '\\') continue
      if (mark === '+') lines.push({ kind: 'add', oldNo: null, newNo: n++, text })
      else if (mark === '-') lines.push({ kind: 'del', oldNo: o++, newNo: null, text })
      else lines.push({ kind: 'ctx', oldNo: o++, newNo: n++, text })
    }
    return { header: `@@ -${h.oldStart},${h.oldLines} +${h.newStart},${h.newLines} @@`, lines }
  })
}
