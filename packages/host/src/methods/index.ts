import type { MethodName } from '@dsh/host-api'
import type { Conn } from '../connection.js'
import type { HostCore } from '../core.js'
import { archiveSession, deleteSession, exportSession, getSession, history, listSessions, renameSession } from './listing.js'
import {
  describeCredentials, describeHost, initialize, listModels, readSettingsMethod, rpcDescribe, setCredentials, unsetCredentials, updateSettings,
} from './meta.js'
import { closeSession, createSession, forkSession, openSession } from './sessions.js'
import { cancel, command, prompt, respond, setEffort, setModel, setMode, setPreset, subscribe, unsubscribe } from './turns.js'

export type Handler = (h: HostCore, conn: Conn, params: any) => Promise<unknown>

/** One handler per method of the table (a test checks that the two key sets are equal). */
export const HANDLERS: Record<MethodName, Handler> = {
  'initialize': initialize,
  'host/describe': describeHost,
  'models/list': listModels,
  'settings/read': readSettingsMethod,
  'settings/update': updateSettings,
  'credentials/describe': describeCredentials,
  'credentials/set': setCredentials,
  'credentials/unset': unsetCredentials,
  'rpc/describe': rpcDescribe,
  'session/create': createSession,
  'session/open': openSession,
  'session/fork': forkSession,
  'session/list': listSessions,
  'session/get': getSession,
  'session/rename': renameSession,
  'session/archive': archiveSession,
  'session/delete': deleteSession,
  'session/close': closeSession,
  'session/history': history,
  'session/subscribe': subscribe,
  'session/unsubscribe': unsubscribe,
  'session/prompt': prompt,
  'session/cancel': cancel,
  'session/set_model': setModel,
  'session/set_effort': setEffort,
  'session/set_mode': setMode,
  'session/set_preset': setPreset,
  'session/command': command,
  'session/export': exportSession,
  'session/respond': respond,
}
