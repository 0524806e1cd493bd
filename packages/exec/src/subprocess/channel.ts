import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import net from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** Bytes dsh reads a command's output into, per channel (reused for every read). */
export const CHANNEL_BUFFER_BYTES = 64 * 1024

const TOKEN_BYTES = 16

/**
 * A command's output stream: `childEnd` is handed to the child as its stdout (then closed
 * here); dsh reads the other end into one fixed buffer (`onread`), so output of any size
 * allocates nothing per chunk — pipe reads otherwise allocate a new buffer per chunk,
 * garbage that V8 frees late (tens of MB for a loud command).
 */
export interface Channel {
  /** Own-listener mode only; with a spawner the spawner holds the child's end. */
  childEnd?: net.Socket
  /** What this channel's connection sent first (spawner mode: the spawner pairs it with a command by it). */
  token: string
  /** Emits 'close' once every holder of the child's end has closed it (EOF). */
  reader: net.Socket
  /** Receives each read: a view into the channel's buffer, valid during the call only. */
  onChunk: (chunk: Buffer) => void
}

/**
 * Makes channels as connected unix stream socket pairs (what `stdio: 'pipe'` gives a child
 * too) through a listening socket in a private directory (mkdtemp: 0700, unpredictable,
 * removed at exit). A connection is paired with its request by a random token it sends
 * first; anything else that connects is dropped. One spare channel is kept ready so a
 * command does not wait for the handshake.
 */
export class ChannelFactory {
  /** `connectTo`: a socket another process (the spawner) listens on; otherwise dsh listens itself. */
  constructor(private readonly connectTo?: string) {}

  private server: Promise<{ server: net.Server; path: string; dir: string }> | undefined
  private readonly waiting = new Map<string, (socket: net.Socket) => void>()
  private spare: Promise<Channel> | undefined
  private closed = false
  private dir: string | undefined

  private listen() {
    this.server ??= new Promise((resolve, reject) => {
      const dir = mkdtempSync(join(tmpdir(), 'dsh-out-'))
      this.dir = dir
      const path = join(dir, 'channel.sock')
      const server = net.createServer((socket) => this.accept(socket))
      server.once('error', (error) => {
        rmSync(dir, { recursive: true, force: true })
        reject(error)
      })
      server.listen(path, () => {
        server.unref()
        resolve({ server, path, dir })
      })
    })
    return this.server
  }

  private accept(socket: net.Socket): void {
    let got = Buffer.alloc(0)
    const onData = (data: Buffer) => {
      got = Buffer.concat([got, data])
      if (got.length < TOKEN_BYTES * 2) return
      socket.off('data', onData)
      socket.pause()
      const claim = this.waiting.get(got.subarray(0, TOKEN_BYTES * 2).toString('latin1'))
      if (!claim || got.length !== TOKEN_BYTES * 2) return void socket.destroy()
      claim(socket)
    }
    socket.on('data', onData)
    socket.on('error', () => socket.destroy())
  }

  private async make(): Promise<Channel> {
    const path = this.connectTo ?? (await this.listen()).path
    const token = randomBytes(TOKEN_BYTES).toString('hex')
    const childEnd = this.connectTo ? undefined : new Promise<net.Socket>((resolve) => this.waiting.set(token, resolve))
    const channel = { token } as Channel
    channel.onChunk = () => {}
    const buffer = Buffer.allocUnsafe(CHANNEL_BUFFER_BYTES)
    const reader = net.connect({ path, onread: { buffer, callback: (n: number) => { channel.onChunk(buffer.subarray(0, n)); return true } } })
    channel.reader = reader
    try {
      await new Promise<void>((resolve, reject) => {
        reader.once('connect', resolve)
        reader.once('error', reject)
      })
      reader.write(token)
      const end = await childEnd
      if (end) channel.childEnd = end
    } catch (error) {
      reader.destroy()
      throw error
    } finally {
      this.waiting.delete(token)
    }
    reader.removeAllListeners('error')
    // an idle spare has no other listener: a reset must not be an uncaught error
    reader.on('error', () => reader.destroy())
    // a spare must not keep the process alive; `take` refs the reader of a channel in use
    reader.unref()
    channel.childEnd?.unref()
    return channel
  }

  /** A fresh channel (the spare when one is ready); rejects when sockets cannot be made here. */
  take(): Promise<Channel> {
    if (this.closed) return Promise.reject(new Error('channel factory closed'))
    const next = this.spare ?? this.make()
    this.spare = this.make()
    this.spare.catch(() => { this.spare = undefined })
    return next.then((channel) => {
      channel.reader.ref()
      return channel
    })
  }

  /** Closes the listener and the spare, removes the directory (synchronously: also used at exit). Idempotent. */
  close(): void {
    this.closed = true
    void this.spare?.then((c) => { c.reader.destroy(); c.childEnd?.destroy() }, () => {})
    this.spare = undefined
    if (this.dir) rmSync(this.dir, { recursive: true, force: true })
    void this.server?.then(({ server }) => server.close(), () => {})
  }
}
