// The session table's per-id lifecycle, alone: opens and closes of one id never overlap.
import { describe, expect, it } from 'vitest'
import type { SessionState } from '../src/state.js'
import { SessionTable } from '../src/table.js'

type Fake = SessionState & { n: number }
const fake = (id: string, n = 0) => ({ id, n }) as unknown as Fake

function deferred<T>() {
  let resolve: (value: T) => void = () => undefined
  const promise = new Promise<T>((r) => { resolve = r })
  return { promise, resolve }
}

describe('SessionTable', () => {
  it('concurrent opens of one id share one load', async () => {
    const table = new SessionTable()
    let loads = 0
    const gate = deferred<void>()
    const load = async () => {
      loads++
      await gate.promise
      const s = fake('a')
      table.set(s)
      return s
    }
    const [x, y] = [table.open('a', load), table.open('a', load)]
    gate.resolve()
    expect(await x).toBe(await y)
    expect(loads).toBe(1)
  })

  it('a close during an open waits for it and closes what it opened; the id is listed meanwhile', async () => {
    const table = new SessionTable()
    const gate = deferred<void>()
    const opening = table.open('a', async () => {
      await gate.promise
      const s = fake('a')
      table.set(s)
      return s
    })
    expect(table.ids()).toEqual(['a'])
    const closed: SessionState[] = []
    const closing = table.close('a', async (s) => { closed.push(s) })
    expect(closing).toBeDefined()
    gate.resolve()
    const opened = await opening
    await closing
    expect(closed).toEqual([opened])
    expect(table.get('a')).toBeUndefined()
    expect(table.ids()).toEqual([])
  })

  it('an open during a close waits for the close and loads afresh', async () => {
    const table = new SessionTable()
    const first = fake('a', 1)
    table.set(first)
    const gate = deferred<void>()
    const order: string[] = []
    const closing = table.close('a', async () => {
      await gate.promise
      order.push('closed')
    })!
    const reopened = table.open('a', async (): Promise<Fake> => {
      order.push('loaded')
      const s = fake('a', 2)
      table.set(s)
      return s
    })
    gate.resolve()
    await closing
    expect(((await reopened) as Fake).n).toBe(2)
    expect(order).toEqual(['closed', 'loaded'])
  })

  it('closing an id that is neither open nor opening is undefined (the caller answers not found)', () => {
    expect(new SessionTable().close('nope', async () => undefined)).toBeUndefined()
  })
})
