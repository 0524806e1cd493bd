export * from './args.js'
export * from './progress.js'
