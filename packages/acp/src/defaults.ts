import { startingChoice } from '@dsh/host'
import type { AcpConnection } from './connection.js'

/** The provider a new session of this connection would get (named in auth_required errors): the host's rule. */
export function defaultProvider(b: AcpConnection): string {
  return startingChoice(b.ctx, { provider: b.providerOverride ?? b.options.defaults.provider }, {}).provider
}
