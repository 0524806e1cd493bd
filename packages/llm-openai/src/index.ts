export { openaiAdapter, chatCompletionsUrl } from './adapter.js'
export { buildChatRequest, toChatMessage } from './request.js'
export type { ChatContentPart, ChatMessage, ChatRequestBody, ChatToolCall } from './request.js'
export { ChatStreamDecoder, mapChatUsage } from './decode.js'
