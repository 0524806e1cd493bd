import { Context, Service } from '@deepseek-ai/cordis'
import { describe, expect, it } from 'vitest'
import type { LlmAdapter } from '@dsh/protocol'
import * as plugin from '@dsh/llm-openai/adapter'
import { openaiAdapter } from '@dsh/llm-openai'

/** Stands in for core's `llm` service: records adapters by protocol. */
class Registry extends Service {
  readonly adapters = new Map<string, LlmAdapter>()
  constructor(ctx: Context) {
    super(ctx, 'llm')
  }
  registerAdapter(adapter: LlmAdapter): () => void {
    this.adapters.set(adapter.protocol, adapter)
    return () => this.adapters.delete(adapter.protocol)
  }
}

describe('@dsh/llm-openai/adapter plugin', () => {
  it('registers the adapter while mounted and removes it on dispose', async () => {
    const root = new Context()
    const registry = await root.plugin(Registry)
    const service = (registry.ctx as unknown as { llm: Registry }).llm
    const fiber = await root.plugin(plugin, {})
    expect(plugin.name).toBe('llm-openai')
    expect(plugin.inject).toEqual(['llm'])
    expect(service.adapters.get('openai')).toBe(openaiAdapter)
    await fiber.dispose()
    expect(service.adapters.has('openai')).toBe(false)
  })
})
