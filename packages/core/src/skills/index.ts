export * from './service.js'
export * from './skills.js'
