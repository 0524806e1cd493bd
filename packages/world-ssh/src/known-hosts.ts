import { createHash, createHmac } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { DshError } from '@dsh/protocol'

/** One usable known_hosts entry for a host (markers `@cert-authority` are skipped, `@revoked` kept). */
export interface KnownKey {
  type: string
  /** The public key blob (base64-decoded). */
  blob: Buffer
  revoked: boolean
  line: number
}

/** OpenSSH's SHA256 fingerprint: `SHA256:` + unpadded base64 of the blob's digest. */
export function fingerprint(blob: Buffer): string {
  return 'SHA256:' + createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')
}

/** The names a host is written as in known_hosts: `host` on port 22, else `[host]:port`. */
export function hostName(host: string, port: number): string {
  return port === 22 ? host : `[${host}]:${port}`
}

function globMatch(pattern: string, name: string): boolean {
  const re = new RegExp('^' + pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.') + '$', 'i')
  return re.test(name)
}

/** Whether a host field (`a,b,!c`, wildcards, or a hashed `|1|salt|hash`) names `name`. */
function fieldMatches(field: string, name: string): boolean {
  if (field.startsWith('|1|')) {
    const [, , salt, hash] = field.split('|')
    if (!salt || !hash) return false
    return createHmac('sha1', Buffer.from(salt, 'base64')).update(name).digest('base64') === hash
  }
  let matched = false
  for (const pattern of field.split(',')) {
    if (pattern.startsWith('!')) {
      if (globMatch(pattern.slice(1), name)) return false
    } else if (globMatch(pattern, name)) {
      matched = true
    }
  }
  return matched
}

/** The entries of known_hosts `text` that name `host:port`. Pure. */
export function keysFor(text: string, host: string, port: number): KnownKey[] {
  const name = hostName(host, port)
  const out: KnownKey[] = []
  const lines = text.split('\n')
  for (let i = 0; i < lines.length; i++) {
    const fields = lines[i]!.trim().split(/\s+/)
    if (!fields[0] || fields[0].startsWith('#')) continue
    let revoked = false
    if (fields[0].startsWith('@')) {
      if (fields[0] === '@revoked') revoked = true
      else continue
      fields.shift()
    }
    const [hosts, type, key] = fields
    if (!hosts || !type || !key || !fieldMatches(hosts, name)) continue
    out.push({ type, blob: Buffer.from(key, 'base64'), revoked, line: i + 1 })
  }
  return out
}

/** Reads the known_hosts file; WORLD_KNOWN_HOSTS when it cannot be read. */
export function readKnownHosts(file: string): string {
  try {
    return readFileSync(file, 'utf8')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    throw new DshError('WORLD_KNOWN_HOSTS', `cannot read the known_hosts file ${file} (${code ?? (error as Error).message})`, {
      cause: error, hint: 'pass --known-hosts FILE with the host\'s key (ssh-keyscan -p PORT HOST >> FILE, then check the fingerprint)',
    })
  }
}

export type HostKeyVerdict = { ok: true } | { ok: false; error: DshError }

/**
 * The verdict on the key a server presented. No entry: refused (never trust on first
 * use). A revoked key or a key matching no entry: refused, naming both fingerprints.
 */
export function verifyHostKey(entries: KnownKey[], presented: Buffer, where: { host: string; port: number; file: string }): HostKeyVerdict {
  const name = hostName(where.host, where.port)
  const got = fingerprint(presented)
  if (entries.some((e) => e.revoked && e.blob.equals(presented))) {
    return { ok: false, error: new DshError('WORLD_HOST_KEY_REVOKED', `the host key of ${name} (${got}) is marked @revoked in ${where.file}`) }
  }
  const pinned = entries.filter((e) => !e.revoked)
  if (pinned.length === 0) {
    return { ok: false, error: new DshError('WORLD_HOST_UNKNOWN', `${where.file} has no key for ${name}; the server presented ${got}. Refusing to trust it on first use.`, {
      hint: `check the fingerprint out of band, then add the key: ssh-keyscan${where.port === 22 ? '' : ` -p ${where.port}`} ${where.host} >> ${where.file}`,
    }) }
  }
  if (pinned.some((e) => e.blob.equals(presented))) return { ok: true }
  const expected = pinned.map((e) => `${fingerprint(e.blob)} (${e.type}, line ${e.line})`).join(', ')
  return { ok: false, error: new DshError('WORLD_HOST_KEY_MISMATCH',
    `the host key of ${name} changed: ${where.file} pins ${expected}, the server presented ${got}. Refusing to connect (it may be an impostor).`, {
      hint: `if the host was really re-keyed, remove the old entry (ssh-keygen -R '${name}' -f ${where.file}) and add the new one after checking it`,
    }) }
}
