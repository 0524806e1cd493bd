import { describe, expect, it } from 'vitest'
import { Semaphore } from '../src/subagents/semaphore.js'

describe('Semaphore', () => {
  it('hands permits out up to its size, then in FIFO order as they are released', async () => {
    const slots = new Semaphore(2)
    const order: string[] = []
    const a = await slots.acquire()
    const b = await slots.acquire()
    expect(slots.busy).toBe(2)
    const c = slots.acquire().then((release) => { order.push('c'); return release })
    const d = slots.acquire().then((release) => { order.push('d'); return release })
    await Promise.resolve()
    expect(order).toEqual([])
    a()
    a() // releasing twice frees one permit only
    const releaseC = await c
    expect(order).toEqual(['c'])
    expect(slots.busy).toBe(2)
    b()
    const releaseD = await d
    expect(order).toEqual(['c', 'd'])
    releaseC()
    releaseD()
    expect(slots.busy).toBe(0)
  })

  it('rejects a wait that is aborted, and the permit goes to the next waiter', async () => {
    const slots = new Semaphore(1)
    const held = await slots.acquire()
    const controller = new AbortController()
    const aborted = slots.acquire(controller.signal)
    const next = slots.acquire()
    controller.abort()
    await expect(aborted).rejects.toMatchObject({ code: 'ABORTED' })
    held()
    const release = await next
    expect(slots.busy).toBe(1)
    release()
    await expect(slots.acquire(controller.signal)).rejects.toMatchObject({ code: 'ABORTED' })
    expect(slots.busy).toBe(0)
  })
})
