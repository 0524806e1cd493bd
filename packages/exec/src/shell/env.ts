/**
 * The environment of agent commands. Deny rules: names containing one of SECRET_WORDS
 * (case-insensitive), names starting with DENY_PREFIXES, and DENY_NAMES (variables that
 * make bash run code or change behaviour behind our back). `allow` keeps a name despite
 * the rules; `deny` adds regular expressions. Names ending in SECRET_SUFFIXES (`MYSQL_PWD`,
 * `GH_PAT`, `SENTRY_DSN`) and values that carry credentials in a URL (`scheme://user:pass@`)
 * are dropped too. Then NON_INTERACTIVE is applied (pager off,
 * no colour, no prompts) and TMPDIR points at the session's temp root.
 */
export const SECRET_WORDS = ['KEY', 'TOKEN', 'SECRET', 'PASSWORD', 'PASSWD', 'CREDENTIAL', 'AUTH', 'PRIVATE', 'COOKIE'] as const
export const SECRET_SUFFIXES = ['_PWD', '_PAT', '_DSN', '_PASS'] as const
export const DENY_PREFIXES = ['DSH_'] as const
/** A URL with a password in it: `scheme://user:password@host`. */
const URL_WITH_PASSWORD = /[a-z][a-z0-9+.-]*:\/\/[^/\s:@]*:[^@\s]+@/i
export const DENY_NAMES = ['BASH_ENV', 'ENV', 'PROMPT_COMMAND', 'FORCE_COLOR', 'CLICOLOR_FORCE'] as const

export const NON_INTERACTIVE: Readonly<Record<string, string>> = {
  PAGER: 'cat',
  GIT_PAGER: 'cat',
  MANPAGER: 'cat',
  SYSTEMD_PAGER: '',
  NO_COLOR: '1',
  TERM: 'dumb',
  GIT_TERMINAL_PROMPT: '0',
  GIT_EDITOR: 'true',
  DEBIAN_FRONTEND: 'noninteractive',
}

export interface EnvRules {
  allow?: readonly string[]
  deny?: readonly string[]
}

export function isDeniedName(name: string, rules: EnvRules = {}): boolean {
  return denier(rules)(name)
}

/** The deny test of `rules`; its `deny` expressions are compiled once, when first needed (not once per name). */
function denier(rules: EnvRules): (name: string) => boolean {
  let deny: RegExp[] | undefined
  return (name) => {
    if (rules.allow?.includes(name)) return false
    const upper = name.toUpperCase()
    if (SECRET_WORDS.some((w) => upper.includes(w))) return true
    if (SECRET_SUFFIXES.some((w) => upper.endsWith(w))) return true
    if (DENY_PREFIXES.some((p) => upper.startsWith(p))) return true
    if ((DENY_NAMES as readonly string[]).includes(upper)) return true
    deny ??= (rules.deny ?? []).map((re) => new RegExp(re, 'i'))
    return deny.some((re) => re.test(name))
  }
}

/** The scrubbed environment: `base` minus denied names, plus NON_INTERACTIVE and TMPDIR, plus `extra` (trusted, applied last). */
export function buildEnv(
  base: Readonly<Record<string, string | undefined>>,
  tmpDir: string,
  rules: EnvRules = {},
  extra: Readonly<Record<string, string>> = {},
): Record<string, string> {
  const env: Record<string, string> = {}
  const denied = denier(rules)
  for (const [name, value] of Object.entries(base)) {
    if (value === undefined || denied(name)) continue
    if (!rules.allow?.includes(name) && URL_WITH_PASSWORD.test(value)) continue
    env[name] = value
  }
  Object.assign(env, NON_INTERACTIVE)
  if (tmpDir) env.TMPDIR = tmpDir
  Object.assign(env, extra)
  return env
}
