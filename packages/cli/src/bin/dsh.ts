// The `dsh` entry (a rejection is an unhandled one: printed, exit code 1).
import { runDsh } from '../entry.js'

void runDsh(process.argv.slice(2))
