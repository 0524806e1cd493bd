// Command-line flags of the bench scripts: `--name VALUE`, read from process.argv.

/** The value after `name`, or `dflt` when the flag is absent. */
export function flag(name, dflt) {
  const i = process.argv.indexOf(name)
  return i > 0 ? process.argv[i + 1] : dflt
}

/** The value after `name` as a number (`Number` of it: a bad value is NaN), or `dflt` when absent. */
export function numberFlag(name, dflt) {
  const i = process.argv.indexOf(name)
  return i > 0 ? Number(process.argv[i + 1]) : dflt
}
