import { request, type IncomingHttpHeaders } from 'node:http'

export interface Reply { status: number; headers: IncomingHttpHeaders; body: string; json: any }

/** A raw HTTP request (fetch would refuse to set Host, Origin or Sec-Fetch-Site). */
export function send(port: number, method: string, path: string, headers: Record<string, string> = {}, body?: string | Buffer): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers: { Host: `127.0.0.1:${port}`, ...headers } }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8')
        let json: unknown = null
        try { json = JSON.parse(text) } catch { /* not JSON */ }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text, json })
      })
    })
    req.on('error', reject)
    req.end(body)
  })
}

export interface Frame { event: string; id?: string; data: any }

/** Opens an SSE stream; `frames` fills as they arrive; `next(pred)` waits for a matching frame. */
export function openSse(port: number, path: string, headers: Record<string, string> = {}) {
  const frames: Frame[] = []
  const waiters: { pred: (f: Frame) => boolean; resolve: (f: Frame) => void }[] = []
  let status = 0
  let close = () => {}
  const opened = new Promise<number>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method: 'GET', path, headers: { Host: `127.0.0.1:${port}`, Accept: 'text/event-stream', ...headers } }, (res) => {
      status = res.statusCode ?? 0
      resolve(status)
      let buf = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => {
        buf += chunk
        let end
        while ((end = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, end)
          buf = buf.slice(end + 2)
          const frame: Frame = { event: 'message', data: null }
          let data: string | undefined
          for (const line of block.split('\n')) {
            if (line.startsWith('event: ')) frame.event = line.slice(7)
            else if (line.startsWith('id: ')) frame.id = line.slice(4)
            else if (line.startsWith('data: ')) data = line.slice(6)
          }
          if (data === undefined) continue
          frame.data = JSON.parse(data)
          frames.push(frame)
          for (const w of [...waiters]) if (w.pred(frame)) { waiters.splice(waiters.indexOf(w), 1); w.resolve(frame) }
        }
      })
    })
    req.on('error', reject)
    req.end()
    close = () => req.destroy()
  })
  return {
    frames, opened, get status() { return status }, close: () => close(),
    next(pred: (f: Frame) => boolean): Promise<Frame> {
      const hit = frames.find(pred)
      if (hit) return Promise.resolve(hit)
      return new Promise((resolve) => waiters.push({ pred, resolve }))
    },
  }
}
