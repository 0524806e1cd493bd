import { DshError, isDshError } from '@dsh/protocol'

/** A standard-schema validation issue (the fields dsh reads). */
export interface SchemaIssue {
  readonly message: string
  readonly path?: readonly (PropertyKey | { readonly key: PropertyKey })[] | undefined
}

/** `config.a.b[0]` for a standard-schema issue path. */
export function issuePath(path: SchemaIssue['path']): string {
  let out = 'config'
  for (const seg of path ?? []) {
    const key = typeof seg === 'object' && seg !== null ? seg.key : seg
    out += typeof key === 'number' ? `[${key}]` : `.${String(key)}`
  }
  return out
}

/** CONFIG_INVALID naming the row, the files that set it and each failing key path. */
export function configError(id: string, name: string, files: readonly string[], issues: readonly SchemaIssue[]): DshError {
  const detail = issues.map((i) => `${issuePath(i.path)}: ${i.message}`).join('; ')
  return new DshError('CONFIG_INVALID', `row ${id} (${name}) set in ${files.join(', ')}: ${detail}`, {
    hint: `fix the config of row ${id} (replace it whole with \`- id: ${id}\` and \`config:\` in a patch file)`,
    data: { row: id, files: [...files], keys: issues.map((i) => issuePath(i.path)) },
  })
}

/**
 * Turns cordis' ValidationError (raised when a config is re-validated inside the
 * fiber) into the same shape; its message lists `- reason (at a.b)` lines.
 */
export function fromValidationError(error: Error, id: string, name: string, files: readonly string[]): DshError {
  const issues = [...error.message.matchAll(/^\s*- (.*?)(?: \(at ([^)]*)\))?$/gm)].map((m) => ({
    message: m[1] ?? '',
    ...(m[2] ? { path: m[2].split('.') } : {}),
  }))
  return configError(id, name, files, issues.length ? issues : [{ message: error.message }])
}

/** A failure of a row's code (import or apply) as a DshError, keeping the cause. */
export function pluginError(code: string, what: string, error: unknown): DshError {
  if (isDshError(error)) return error
  const message = error instanceof Error ? error.message : String(error)
  return new DshError(code, `${what}: ${message}`, { cause: error })
}

/** `CODE: message` (+ hint) without a stack trace. */
export function reasonOf(error: DshError): string {
  return `${error.code}: ${error.message}${error.hint ? ` (hint: ${error.hint})` : ''}`
}
