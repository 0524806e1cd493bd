import { useMockModel } from '@dsh/testkit/tree'
import { seamConformance, toolConformance } from './conformance.js'
import { execRoot, LOCAL_USER, toolTurn, workspaceOf } from './trees.js'

const model = useMockModel()

seamConformance('local world', async () => {
  const root = await execRoot()
  return { root, within: (body) => body(), workspace: async () => workspaceOf(undefined), user: LOCAL_USER, close: () => root.fiber.dispose() }
})

toolConformance('local world', async () => ({
  user: LOCAL_USER,
  workspace: async () => workspaceOf(undefined),
  turn: (ws, calls) => toolTurn(model(), ws, calls),
  close: async () => undefined,
}))
