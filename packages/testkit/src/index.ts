export { startMockModel } from './mock-model/server.js'
export type { MockModel, MockModelOptions, RecordedRequest } from './mock-model/server.js'
export { loadScript, parseScript, parseScriptText } from './mock-model/script.js'
export type { ErrorStep, Expect, FaultKind, FaultStep, FinishKind, ReplyStep, Script, Step, ToolCallSpec } from './mock-model/script.js'
export { checkExpect, viewRequest } from './mock-model/expect.js'
export type { MockProtocol, RequestView } from './mock-model/expect.js'
export { requestsFromLog, expectedBodies } from './log-check.js'
export type { LoggedRequest } from './log-check.js'
// Test-tree helpers (they use vitest) live in the `@dsh/testkit/tree` entry, not here.
