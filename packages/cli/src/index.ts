export { parseArgs, DEFAULT_PROFILE, DEFAULT_PROVIDER, type Args } from './args.js'
export { HELP } from './help.js'
