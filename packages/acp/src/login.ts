import { DshError } from '@dsh/protocol'

export interface LoginIo {
  stdin: NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?: (raw: boolean) => unknown }
  stderr: NodeJS.WritableStream
}

/**
 * Reads an API key for `login` (the ACP `terminal` auth method runs the agent with
 * `login`): typed without echo on a TTY, else the whole of stdin. The key is validated
 * (one word) and never printed.
 */
export async function readApiKey(io: LoginIo, provider: string): Promise<string> {
  const key = (io.stdin.isTTY && io.stdin.setRawMode ? await readHidden(io, `API key for ${provider}: `) : await readAll(io.stdin)).trim()
  if (!key) throw new DshError('LOGIN_EMPTY', 'no key given', { hint: 'type the key, or pipe it: printf %s "$KEY" | dsh-acp login' })
  if (/\s/.test(key)) throw new DshError('LOGIN_INVALID', 'the key contains whitespace', { hint: 'give the key alone, on one line' })
  return key
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  let text = ''
  stream.setEncoding('utf8')
  for await (const chunk of stream) text += chunk as string
  return text
}

function readHidden(io: LoginIo, prompt: string): Promise<string> {
  const { stdin, stderr } = io
  stderr.write(prompt)
  return new Promise((resolve, reject) => {
    let value = ''
    stdin.setRawMode!(true)
    stdin.setEncoding('utf8')
    const done = (result: string | Error) => {
      stdin.setRawMode!(false)
      stdin.pause()
      stdin.off('data', onData)
      stderr.write('\n')
      if (result instanceof Error) reject(result)
      else resolve(result)
    }
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n' || ch === '\u0004') return done(value)
        if (ch === '\u0003') return done(new DshError('LOGIN_CANCELLED', 'cancelled'))
        if (ch === '\u007f' || ch === '\b') value = value.slice(0, -1)
        else if (ch >= ' ') value += ch
      }
    }
    stdin.on('data', onData)
    stdin.resume()
  })
}
