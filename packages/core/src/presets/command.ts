import type { CommandSpec } from '../commands/registry.js'
import type { PresetService } from './service.js'

/** `/agent [preset]`: lists the agent presets, or chooses this session's (before the first turn) and applies it to the agent. */
export function agentCommand(presets: PresetService): CommandSpec {
  return {
    name: 'agent', description: "List agent presets, or choose this session's before the first turn", argumentHint: '[preset]', source: 'builtin',
    async run({ session, agent, args }) {
      const current = presets.current(session)
      if (!args) {
        const lines = presets.list().map((p) => `  ${p.id}${p.id === current.id ? ' *' : ''} — ${p.description}`)
        return { reply: ['Agent presets (* = current):', ...lines, 'Choose with /agent <preset> (before the first turn).'].join('\n') }
      }
      const preset = presets.set(session, args)
      const { toolFilter, model, provider, reasoningEffort } = presets.agentOptions(preset)
      // the tool set always follows the preset; model choices only when the preset names them
      agent.options = {
        ...agent.options, toolFilter,
        ...(provider ? { provider } : {}), ...(model ? { model } : {}), ...(reasoningEffort ? { reasoningEffort } : {}),
      }
      return { reply: `Agent preset: ${preset.id} — ${preset.description}` }
    },
  }
}
