import MarkdownIt from 'markdown-it'

/**
 * Safe markdown: raw HTML is escaped (html: false), links and images keep only http(s),
 * mailto and in-page/relative targets (javascript:, data:, vbscript:, file: … are dropped),
 * every link opens in a new tab without a referrer.
 */
const SAFE_URL = /^(https?:|mailto:|#|\/(?!\/)|\.{0,2}\/)/i

const md = new MarkdownIt({ html: false, linkify: false, breaks: false, typographer: false })
md.validateLink = (url: string) => SAFE_URL.test(url.trim())
const defaultLinkOpen = md.renderer.rules.link_open ?? ((tokens, idx, options, _env, self) => self.renderToken(tokens, idx, options))
md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
  tokens[idx]!.attrSet('target', '_blank')
  tokens[idx]!.attrSet('rel', 'noopener noreferrer')
  return defaultLinkOpen(tokens, idx, options, env, self)
}

/** Past this size an answer is shown as plain text (the parser stays fast, the page responsive). */
export const MARKDOWN_LIMIT = 200_000

export function renderMarkdown(text: string): string {
  return md.render(text)
}
