export { anthropicAdapter, messagesUrl, ANTHROPIC_VERSION } from './adapter.js'
export {
  buildMessagesRequest, toAnthropicMessages, thinkingBudget, breakpointIndices, withBreakpoint, DEFAULT_MAX_TOKENS,
} from './request.js'
export { encodeMessagesRequest, serializeMessagesRequest } from './body.js'
export type { AnthropicContentBlock, AnthropicMessage, AnthropicToolResultBlock, CacheControl, MessagesRequestBody } from './request.js'
export { MessagesStreamDecoder } from './decode.js'
