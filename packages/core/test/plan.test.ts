import { describe, expect, it } from 'vitest'
import { planSection } from '../src/plan/service.js'

describe('planSection', () => {
  it('asks for exit_plan_mode only when the tool is offered', () => {
    const withTool = planSection({ sessionId: 's', cwd: '/w', tools: ['read', 'exit_plan_mode'] })
    expect(withTool).toMatch(/^Plan mode is on\. Explore read-only first/)
    expect(withTool).toContain('call exit_plan_mode with it')
    const without = planSection({ sessionId: 's', cwd: '/w', tools: ['read'] })
    expect(without).not.toContain('exit_plan_mode')
    expect(without).toContain('wait for the user to accept it')
  })
})
