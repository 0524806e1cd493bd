import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { DshError } from '@dsh/protocol'
import type { Client, ClientChannel, SFTPWrapper } from 'ssh2'
import { keysFor, readKnownHosts, verifyHostKey, type HostKeyVerdict } from './known-hosts.js'
import { formatTarget, type WorldTarget } from './url.js'

type Ssh2 = typeof import('ssh2')
let loaded: Ssh2 | undefined
/**
 * ssh2 (CommonJS, ~90 modules) is required on first use, not at import: every profile
 * that mounts the ssh world would otherwise pay its load at start-up (decision 0051).
 */
function ssh2(): Ssh2 {
  return (loaded ??= createRequire(import.meta.url)('ssh2') as Ssh2)
}

export interface ConnectionOptions {
  target: WorldTarget
  identity: string
  knownHosts: string
  /** SSH-level keepalive period; the connection counts as dropped after 3 unanswered. */
  keepaliveMs: number
  readyTimeoutMs: number
}

/** Reads and parses the private key; WORLD_IDENTITY (missing, unreadable, not a key) or WORLD_IDENTITY_PASSPHRASE. */
export function readIdentity(file: string): Buffer {
  let data: Buffer
  try {
    data = readFileSync(file)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    const why = code === 'ENOENT' ? 'does not exist' : code === 'EACCES' ? 'is not readable' : `cannot be read (${code ?? (error as Error).message})`
    throw new DshError('WORLD_IDENTITY', `the identity file ${file} ${why}`, { cause: error, hint: 'pass --identity FILE (an unencrypted OpenSSH private key)' })
  }
  const parsed = ssh2().utils.parseKey(data)
  if (parsed instanceof Error) {
    if (/passphrase/i.test(parsed.message)) {
      throw new DshError('WORLD_IDENTITY_PASSPHRASE', `the identity file ${file} is protected by a passphrase, and dsh uses no agent and asks for no passphrase`, {
        hint: 'use a key without a passphrase for this world (ssh-keygen -t ed25519 -N "" -f FILE), kept readable only by you',
      })
    }
    throw new DshError('WORLD_IDENTITY', `the identity file ${file} is not a private key dsh can use: ${parsed.message}`)
  }
  return data
}

function connectError(error: Error & { level?: string; code?: string }, t: WorldTarget, verdict: HostKeyVerdict | undefined): DshError {
  if (verdict && !verdict.ok) return verdict.error
  const where = formatTarget(t)
  if (error.level === 'client-authentication') {
    return new DshError('WORLD_AUTH_FAILED', `${where}: the server refused the key for user "${t.user}" (${error.message})`, {
      cause: error, hint: 'check the user name and that the identity\'s public key is in that user\'s ~/.ssh/authorized_keys',
    })
  }
  if (error.level === 'client-timeout') {
    return new DshError('WORLD_UNREACHABLE', `${where}: no SSH handshake within the timeout`, { cause: error })
  }
  return new DshError('WORLD_UNREACHABLE', `${where}: cannot connect (${error.code ?? error.message})`, {
    cause: error, hint: 'check the host, the port and that sshd runs there',
  })
}

/**
 * One SSH connection to a world, opened on first use. A dropped connection fails every
 * operation in flight with WORLD_CONNECTION_LOST (never a silent retry) and is reopened
 * only by the next new operation. Groups whose channel was lost are killed on reconnect.
 */
export class SshConnection {
  private client: Client | undefined
  private connecting: Promise<Client> | undefined
  private sftpSession: Promise<SFTPWrapper> | undefined
  private readonly inFlight = new Set<(error: DshError) => void>()
  private readonly lostListeners = new Set<(error: DshError) => void>()
  /** Remote process groups that were running when their connection dropped. */
  readonly orphans = new Set<number>()
  private closed = false
  private readonly key: Buffer
  /** Counts connections; an object (SFTP session) belongs to the one it was opened on. */
  private generation = 0
  private readonly born = new WeakMap<object, number>()

  constructor(readonly options: ConnectionOptions) {
    this.key = readIdentity(options.identity)
  }

  get target(): WorldTarget {
    return this.options.target
  }

  private async connect(): Promise<Client> {
    const { target: t, knownHosts } = this.options
    const entries = keysFor(readKnownHosts(knownHosts), t.host, t.port)
    let verdict: HostKeyVerdict | undefined
    const client = new (ssh2().Client)()
    await new Promise<void>((resolve, reject) => {
      client.once('ready', () => resolve())
      client.once('error', (error) => reject(connectError(error, t, verdict)))
      client.connect({
        host: t.host, port: t.port, username: t.user, privateKey: this.key,
        hostVerifier: (key: Buffer) => (verdict = verifyHostKey(entries, key, { host: t.host, port: t.port, file: knownHosts })).ok,
        agentForward: false, tryKeyboard: false,
        keepaliveInterval: this.options.keepaliveMs, keepaliveCountMax: 3, readyTimeout: this.options.readyTimeoutMs,
      })
    })
    client.on('error', () => undefined)
    client.once('close', () => this.lost(client))
    return client
  }

  private lostError(): DshError {
    return new DshError('WORLD_CONNECTION_LOST', `the connection to ${formatTarget(this.target)} dropped; the operation's outcome is unknown and it was not retried`, {
      hint: 'check the remote side before running it again (a command may have run partly)',
    })
  }

  private lost(client: Client): void {
    if (this.client !== client) return
    this.client = undefined
    this.sftpSession = undefined
    const error = this.lostError()
    for (const fail of [...this.inFlight]) fail(error)
    this.inFlight.clear()
    for (const listener of [...this.lostListeners]) listener(error)
  }

  /** The live client, connecting (again) when there is none. */
  async ready(): Promise<Client> {
    if (this.closed) throw new DshError('WORLD_CLOSED', `the world ${formatTarget(this.target)} is closed`)
    if (this.client) return this.client
    this.connecting ??= this.connect().then(async (client) => {
      this.client = client
      this.generation++
      await this.reap(client)
      return client
    }).finally(() => { this.connecting = undefined })
    return this.connecting
  }

  /** Kills (best effort, bounded) the groups a dropped connection left running: a new operation, not a retry. */
  private async reap(client: Client): Promise<void> {
    if (!this.orphans.size) return
    const groups = [...this.orphans]
    this.orphans.clear()
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 5000)
      client.exec(`kill -KILL ${groups.map((g) => `-${g}`).join(' ')} 2>/dev/null; true`, (err, ch) => {
        if (err) return resolve()
        ch.on('close', () => { clearTimeout(timer); resolve() }).resume().end()
        ch.stderr.resume()
      })
    })
  }

  /** Reconnects only to kill what a dropped connection left running (used when a world closes). */
  async reapOrphans(): Promise<void> {
    if (this.orphans.size && !this.closed) await this.ready().catch(() => undefined)
  }

  /** Called each time an open connection drops (not on `close()`). Returns the unsubscriber. */
  onLost(listener: (error: DshError) => void): () => void {
    this.lostListeners.add(listener)
    return () => { this.lostListeners.delete(listener) }
  }

  /**
   * Tracks an operation: `fail` is called once if the connection drops before the
   * returned `done()` is called.
   */
  track(fail: (error: DshError) => void, on?: object): () => void {
    if (!this.client || (on && this.born.get(on) !== this.generation)) {
      // its connection is gone already: nothing will ever answer
      const error = this.lostError()
      queueMicrotask(() => fail(error))
      return () => undefined
    }
    this.inFlight.add(fail)
    return () => { this.inFlight.delete(fail) }
  }

  /** An exec channel running `command` (a string for the remote login shell). */
  async exec(command: string): Promise<ClientChannel> {
    const client = await this.ready()
    return new Promise((resolve, reject) => {
      const done = this.track(reject)
      client.exec(command, (error, channel) => {
        done()
        if (error) reject(new DshError('SPAWN_FAILED', `${formatTarget(this.target)}: cannot open an exec channel (${error.message})`, { cause: error }))
        else resolve(channel)
      })
    })
  }

  /** Runs a short helper command, waiting for it; its output is discarded. */
  async fire(command: string): Promise<void> {
    const channel = await this.exec(command).catch(() => undefined)
    if (!channel) return
    await new Promise<void>((resolve) => {
      const done = this.track(() => resolve())
      channel.on('close', () => { done(); resolve() })
      channel.resume()
      channel.stderr.resume()
      channel.end()
    })
  }

  /** The SFTP session of the current connection. */
  async sftp(): Promise<SFTPWrapper> {
    const client = await this.ready()
    this.sftpSession ??= new Promise<SFTPWrapper>((resolve, reject) => {
      const done = this.track(reject)
      client.sftp((error, sftp) => {
        done()
        if (!error) this.born.set(sftp, this.generation)
        if (error) reject(new DshError('WORLD_SFTP', `${formatTarget(this.target)}: no SFTP subsystem (${error.message})`, { cause: error, hint: 'enable Subsystem sftp in the server\'s sshd_config' }))
        else resolve(sftp)
      })
    })
    const pending = this.sftpSession
    pending.catch(() => { if (this.sftpSession === pending) this.sftpSession = undefined })
    return pending
  }

  close(): void {
    this.closed = true
    const client = this.client
    this.client = undefined
    client?.end()
  }
}
