export * from './service.js'
export * from './spans.js'
export * from './summary.js'
export * from './tokens.js'
