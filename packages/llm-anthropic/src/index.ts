export { anthropicAdapter, messagesUrl, ANTHROPIC_VERSION } from './adapter.js'
export { buildMessagesRequest, toAnthropicMessages, thinkingBudget, DEFAULT_MAX_TOKENS } from './request.js'
export type { AnthropicContentBlock, AnthropicMessage, MessagesRequestBody } from './request.js'
export { MessagesStreamDecoder } from './decode.js'
