export * from './builtins.js'
export * from './registry.js'
export * from './status.js'
