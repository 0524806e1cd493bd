export * from './titles.js'
