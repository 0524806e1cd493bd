export * from './shapes.js'
export * from './methods.js'
export * from './errors.js'
export * from './describe.js'
