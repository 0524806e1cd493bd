import { describe, expect, it } from 'vitest'
import { startingModel } from '../src/presets/defaults.js'

describe('startingModel', () => {
  it('a flag wins, then the preset, then settings', () => {
    expect(startingModel({}, {}, { provider: 'deepseek', model: 'deepseek-chat', reasoningEffort: 'high' }))
      .toEqual({ provider: 'deepseek', model: 'deepseek-chat', reasoningEffort: 'high' })
    expect(startingModel({}, { model: 'deepseek-reasoner' }, { model: 'deepseek-chat' })).toEqual({ model: 'deepseek-reasoner' })
    expect(startingModel({ model: 'flag-model' }, { model: 'deepseek-reasoner' }, { model: 'deepseek-chat' })).toEqual({ model: 'flag-model' })
  })

  it('a model never travels to another provider', () => {
    // settings name a deepseek model; the flag picks anthropic: the provider's default model applies
    expect(startingModel({ provider: 'anthropic' }, {}, { provider: 'deepseek', model: 'deepseek-chat' })).toEqual({ provider: 'anthropic' })
    expect(startingModel({ provider: 'anthropic' }, {}, { model: 'deepseek-chat' })).toEqual({ provider: 'anthropic' })
    // the preset picks its own provider and model over the settings'
    expect(startingModel({}, { provider: 'anthropic', model: 'claude-haiku-4-5' }, { provider: 'deepseek', model: 'deepseek-chat' }))
      .toEqual({ provider: 'anthropic', model: 'claude-haiku-4-5' })
    // a preset model with no provider is dropped when a flag chose a provider
    expect(startingModel({ provider: 'openai' }, { model: 'deepseek-reasoner' }, {})).toEqual({ provider: 'openai' })
    // settings' model stays with settings' provider when the flag names the same one
    expect(startingModel({ provider: 'deepseek' }, {}, { provider: 'deepseek', model: 'deepseek-reasoner' })).toEqual({ provider: 'deepseek', model: 'deepseek-reasoner' })
  })
})
