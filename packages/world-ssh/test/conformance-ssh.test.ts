import { Context } from '@deepseek-ai/cordis'
import { inWorld } from '@dsh/exec'
import { useMockModel } from '@dsh/testkit/tree'
import { describe } from 'vitest'
import { SshWorld } from '../src/world.js'
import { seamConformance, toolConformance } from './conformance.js'
import { CAN_RUN_SSHD, startSshd, type Sshd } from './sshd.js'
import { execRoot, toolTurn, workspaceOf } from './trees.js'

const model = useMockModel()

describe.skipIf(!CAN_RUN_SSHD)('ssh world (a real sshd on loopback, another user)', () => {
  seamConformance('ssh world', async () => {
    const sshd = await startSshd(1)
    const user = sshd.users[0]!
    const root = await execRoot()
    const world = await SshWorld.open(new Context(), { url: sshd.url(user, user.home), identity: sshd.identity, knownHosts: sshd.knownHosts }, 'conformance')
    return {
      root, user, within: (body) => inWorld(world, body), workspace: async () => workspaceOf(user),
      close: async () => { await world.close(); await root.fiber.dispose(); await sshd.stop() },
    }
  })

  let sshd: Sshd | undefined
  toolConformance('ssh world', async () => {
    sshd = await startSshd(1)
    const s = sshd
    const user = s.users[0]!
    return {
      user,
      workspace: async () => workspaceOf(user),
      turn: (ws, calls) => toolTurn(model(), ws, calls, { url: s.url(user, ws), identity: s.identity, knownHosts: s.knownHosts }),
      close: async () => { await s.stop() },
    }
  })
})
