import { spawn } from 'node:child_process'
import { chmodSync, chownSync, existsSync, lchownSync, lstatSync, mkdirSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import type { Attack } from './escape-attack.js'
import { NOBODY, type World } from './escape-world.js'

// Temp-root cases (issue 12 item 6c): TMPDIR is a shared sticky folder (like /tmp) in which
// another user (nobody) or root got there first. The user's temp base is
// `<TMPDIR>/dsh-<uid>`, created 0700 and checked (a real directory, the user's, closed to
// others) before every use. Escapes are checked on the world as for every case; here that
// includes the other user's folder (nothing of the session may land in it). `check` adds
// what must have happened: a refusal that names TMP_ROOT_UNSAFE, or a temp root that works.

const refused = (_w: World, saw: string): string[] => (saw.includes('TMP_ROOT_UNSAFE') ? [] : ['the model was not told TMP_ROOT_UNSAFE'])

/** The base is the user's own directory, 0700, and the command's temp file was written through it. */
const usable = (w: World, saw: string): string[] => {
  const out: string[] = []
  const st = existsSync(w.tmpBase) ? lstatSync(w.tmpBase) : undefined
  if (!st?.isDirectory() || st.uid !== w.uid) out.push(`the temp base ${w.tmpBase} is not the user's directory`)
  else if ((st.mode & 0o777) !== 0o700) out.push(`the temp base has mode ${(st.mode & 0o777).toString(8)}, not 700`)
  if (!saw.includes(`probe-${w.token}`)) out.push('the command could not use its temp folder')
  return out
}

/**
 * Writes through TMPDIR and next to it, and says where TMPDIR really is: dsh removes the
 * session's temp folder at the end, so what the command saw is the evidence of a temp root
 * that led into the other user's folder.
 */
const probe = (w: World): string => `echo "tmp-at:$(readlink -f "$TMPDIR")"; echo probe-${w.token} > "$TMPDIR/probe" && cat "$TMPDIR/probe"; echo secret-${w.token} > "$TMPDIR/../leak"; true`

/** The command's temp folder must not have resolved into the other user's folder. */
const notTheirs = (w: World, saw: string): string[] => (saw.includes(`tmp-at:${w.attacker}`) ? ["the session's temp folder was in another user's folder"] : [])
const both = (...checks: ((w: World, saw: string) => string[])[]) => (w: World, saw: string) => checks.flatMap((c) => c(w, saw))

const HELD = 'dsh checks its temp root in every preset'

/**
 * The user's base exists (an earlier run made it); while dsh runs, nobody keeps trying to
 * rename it, or a session folder in it, away and put a symlink to its own folder in its
 * place. It stops once a swap worked (then the run must not write through it).
 */
async function swapRace(w: World, stop: { done: boolean }): Promise<void> {
  const loop = `B='${w.tmpBase}'; A='${w.attacker}'
while [ ! -L "$B" ]; do
  mv -f "$B" "$B.moved" 2>/dev/null && ln -sn "$A" "$B" && break
  for d in "$B"/*; do [ -L "$d" ] && continue; mv -f "$d" "$d.moved" 2>/dev/null && ln -sn "$A" "$d"; done
done`
  const child = spawn('bash', ['-c', loop], { uid: NOBODY, gid: NOBODY, stdio: 'ignore' })
  while (!stop.done) await new Promise((r) => setTimeout(r, 20))
  child.kill('SIGKILL')
}

export const TMP_ATTACKS: Attack[] = [
  {
    name: "another user's pre-created temp base", category: 'tmp', tmp: 'shared', holdsUnconfined: HELD,
    setup: (w) => { mkdirSync(w.tmpBase); chmodSync(w.tmpBase, 0o777); chownSync(w.tmpBase, NOBODY, NOBODY) },
    bash: probe, check: both(notTheirs, refused),
  },
  {
    name: "the temp base a symlink to another user's folder", category: 'tmp', tmp: 'shared', holdsUnconfined: HELD,
    setup: (w) => { symlinkSync(w.attacker, w.tmpBase); lchownSync(w.tmpBase, NOBODY, NOBODY) },
    bash: probe, check: both(notTheirs, refused),
  },
  {
    name: 'a root-owned 0755 temp base', category: 'tmp', tmp: 'shared', holdsUnconfined: HELD,
    setup: (w) => { mkdirSync(w.tmpBase, { mode: 0o755 }); chmodSync(w.tmpBase, 0o755) },
    bash: probe, check: both(notTheirs, refused),
  },
  {
    name: 'a root-owned 0755 <TMPDIR>/dsh (the old shared name)', category: 'tmp', tmp: 'shared', holdsUnconfined: HELD,
    setup: (w) => { mkdirSync(join(w.sharedTmp, 'dsh'), { mode: 0o755 }); chmodSync(join(w.sharedTmp, 'dsh'), 0o755) },
    bash: probe, check: both(notTheirs, usable),
  },
  {
    name: "the user's own temp base left open (0777) is closed before use", category: 'tmp', tmp: 'shared', holdsUnconfined: HELD,
    setup: (w) => { mkdirSync(w.tmpBase); chmodSync(w.tmpBase, 0o777); chownSync(w.tmpBase, w.uid, w.uid) },
    bash: probe, check: both(notTheirs, usable),
  },
  {
    name: 'symlink swap race on the temp base and session folders', category: 'tmp', tmp: 'shared', holdsUnconfined: HELD,
    setup: (w) => { mkdirSync(w.tmpBase, { mode: 0o700 }); chownSync(w.tmpBase, w.uid, w.uid) },
    race: swapRace, bash: probe, check: both(notTheirs, usable),
  },
  {
    name: 'the file tools write into the temp base', category: 'tmp', tmp: 'shared',
    setup: (w) => { symlinkSync(w.attacker, w.tmpBase); lchownSync(w.tmpBase, NOBODY, NOBODY) },
    file: (w) => [{ name: 'write', arguments: { path: join(w.tmpBase, 'leak'), content: 'escaped\n' } }],
  },
]
