export * from './paths.js'
export { parseHomeYaml, writeFileAtomic, keyPath } from './files.js'
export * from './settings.js'
export * from './credentials.js'
