import type { AssistantBlock, FinishReason, LlmFailure, StreamChunk, Usage } from '@dsh/protocol'

export interface StreamOutcome {
  /** Completed blocks in order; on abort or failure, the partial text/reasoning streamed so far. */
  blocks: AssistantBlock[]
  finish: FinishReason
  usage?: Usage
  error?: LlmFailure
}

/**
 * Folds one attempt's chunks into blocks. `onDelta` sees text and reasoning as they
 * arrive. A stream that ends without `finish` is a TRANSPORT failure; a throw from the
 * stream is reported the same way (never propagated).
 */
export async function consumeStream(
  stream: AsyncIterable<StreamChunk>,
  onDelta: (kind: 'text' | 'reasoning', delta: string) => void,
): Promise<StreamOutcome> {
  const done = new Map<number, AssistantBlock>()
  const partial = new Map<number, { kind: 'text' | 'reasoning' | 'tool-call'; text: string }>()
  let usage: Usage | undefined
  const assemble = (keepPartial: boolean): AssistantBlock[] => {
    const indexes = [...new Set([...done.keys(), ...(keepPartial ? partial.keys() : [])])].sort((a, b) => a - b)
    const out: AssistantBlock[] = []
    for (const index of indexes) {
      const block = done.get(index)
      if (block) out.push(block)
      else {
        const p = partial.get(index)
        if (p && p.kind !== 'tool-call' && p.text) out.push(p.kind === 'text' ? { type: 'text', text: p.text } : { type: 'reasoning', text: p.text })
      }
    }
    return out
  }
  try {
    for await (const chunk of stream) {
      switch (chunk.type) {
        case 'block-start':
          partial.set(chunk.index, { kind: chunk.block.kind, text: '' })
          break
        case 'text-delta':
        case 'reasoning-delta': {
          const p = partial.get(chunk.index)
          if (p) p.text += chunk.text
          onDelta(chunk.type === 'text-delta' ? 'text' : 'reasoning', chunk.text)
          break
        }
        case 'tool-call-delta':
          break
        case 'block-end':
          partial.delete(chunk.index)
          done.set(chunk.index, chunk.block)
          break
        case 'usage':
          usage = chunk.usage
          break
        case 'finish': {
          const complete = chunk.reason !== 'aborted' && chunk.reason !== 'error'
          return {
            blocks: assemble(!complete), finish: chunk.reason,
            ...(usage ? { usage } : {}), ...(chunk.error ? { error: chunk.error } : {}),
          }
        }
      }
    }
    return { blocks: assemble(true), finish: 'error', ...(usage ? { usage } : {}), error: { code: 'TRANSPORT', message: 'the model stream ended without a finish', retryable: true } }
  } catch (error) {
    return {
      blocks: assemble(true), finish: 'error', ...(usage ? { usage } : {}),
      error: { code: 'TRANSPORT', message: error instanceof Error ? error.message : String(error), retryable: true },
    }
  }
}
