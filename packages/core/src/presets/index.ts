export * from './presets.js'
export * from './service.js'
