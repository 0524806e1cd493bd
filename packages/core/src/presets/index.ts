export * from './presets.js'
export * from './service.js'
export * from './defaults.js'
