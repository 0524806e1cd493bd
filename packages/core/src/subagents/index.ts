export * from './semaphore.js'
export * from './task.js'
