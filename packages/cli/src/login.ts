import { BUILTIN_PROVIDERS, credentialsFile, readCredentials, setCredential } from '@dsh/core/credentials'
import { DshError } from '@dsh/protocol'
import type { Args } from './args.js'
import type { LaunchEnv } from './env.js'

/**
 * `dsh login [--provider P]`: reads an API key — typed without echo on a TTY, or
 * the whole of stdin otherwise — and stores it in `$DSH_HOME/.credentials.yaml`
 * (mode 0600, atomic write). The key is never printed.
 */
export async function login(args: Extract<Args, { type: 'login' }>, launch: LaunchEnv): Promise<number> {
  const file = credentialsFile(launch.home)
  // a key is stored only for a provider dsh knows (built in, or already in the store)
  const known = [...new Set([...BUILTIN_PROVIDERS.map((p) => p.id), ...Object.keys(readCredentials(file).value.providers)])]
  if (!known.includes(args.provider)) {
    throw new DshError('UNKNOWN_PROVIDER', `unknown provider "${args.provider}"`, { hint: `known providers: ${known.join(', ')}` })
  }
  const stdin = process.stdin
  const key = (stdin.isTTY ? await readHidden(`API key for ${args.provider}: `) : await readAll(stdin)).trim()
  if (!key) throw new DshError('LOGIN_EMPTY', 'no key given', { hint: 'type the key, or pipe it: printf %s "$KEY" | dsh login' })
  if (/\s/.test(key)) throw new DshError('LOGIN_INVALID', 'the key contains whitespace', { hint: 'give the key alone, on one line' })
  setCredential(file, args.provider, { apiKey: key })
  launch.io.stderr.write(`stored the ${args.provider} key in ${file}\n`)
  return 0
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  let text = ''
  stream.setEncoding('utf8')
  for await (const chunk of stream) text += chunk as string
  return text
}

function readHidden(prompt: string): Promise<string> {
  const stdin = process.stdin
  process.stderr.write(prompt)
  return new Promise((resolve, reject) => {
    let value = ''
    stdin.setRawMode(true)
    stdin.setEncoding('utf8')
    const done = (result: string | Error) => {
      stdin.setRawMode(false)
      stdin.pause()
      stdin.off('data', onData)
      process.stderr.write('\n')
      if (result instanceof Error) reject(result)
      else resolve(result)
    }
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n') return done(value)
        if (ch === '\u0003') return done(new DshError('LOGIN_CANCELLED', 'cancelled'))
        if (ch === '\u0004') return done(value)
        if (ch === '\u007f' || ch === '\b') value = value.slice(0, -1)
        else if (ch >= ' ') value += ch
      }
    }
    stdin.on('data', onData)
    stdin.resume()
  })
}
