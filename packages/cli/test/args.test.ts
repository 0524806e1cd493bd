import { describe, expect, it } from 'vitest'
import { parseArgs } from '../src/args.js'

describe('parseArgs', () => {
  const cases: [string[], unknown][] = [
    [[], { type: 'run', patches: [], argv: [] }],
    [['--help'], { type: 'help' }],
    [['-h'], { type: 'help' }],
    [['web', '--help'], { type: 'help', topic: 'web' }],
    [['--version'], { type: 'version' }],
    [['--profile', 'acp', '--patch', 'a.yml', '--patch=b.yml', 'task', '--help'], { type: 'run', profile: 'acp', patches: ['a.yml', 'b.yml'], argv: ['task', '--help'], help: true }],
    // --help after a profile: the launcher's help and the surface's (the token is passed on)
    [['--profile', 'headless', '--help'], { type: 'run', profile: 'headless', patches: [], argv: ['--help'], help: true }],
    [['--profile', 'headless', '-h'], { type: 'run', profile: 'headless', patches: [], argv: ['-h'], help: true }],
    // launcher flags after a surface flag or the task are still the launcher's
    [['--profile', 'headless', '--json', '--patch', 'p.yml', 'task'], { type: 'run', profile: 'headless', patches: ['p.yml'], argv: ['--json', 'task'] }],
    [['--json', 'task', '--profile=acp', '--patch=q.yml'], { type: 'run', profile: 'acp', patches: ['q.yml'], argv: ['--json', 'task'] }],
    [['--model', 'm', '--dump-config'], { type: 'run', patches: [], dump: 'config', argv: ['--model', 'm'] }],
    [['--json', '--profile', 'a', '--profile', 'b'], { type: 'error', code: 'USAGE', message: '--profile given twice', hint: 'see dsh --help' }],
    // after an app token: -v, --version and subcommand names belong to the app; after `--` everything does
    [['task', '-v', '--version', 'sessions', 'login'], { type: 'run', patches: [], argv: ['task', '-v', '--version', 'sessions', 'login'] }],
    [['--json', '--', '--patch', 'x'], { type: 'run', patches: [], argv: ['--json', '--patch', 'x'] }],
    [['sessions'], { type: 'sessions', json: false }],
    [['sessions', '--json', '--workspace', 'w', '--profile=p'], { type: 'sessions', profile: 'p', json: true, workspace: 'w' }],
    [['--profile', 'p', 'sessions', '--workspace=.'], { type: 'sessions', profile: 'p', json: false, workspace: '.' }],
    [['sessions', '--help'], { type: 'help', topic: 'sessions' }],
    [['plugin', 'list', '--help'], { type: 'help', topic: 'plugin' }],
    [['login', '-h'], { type: 'help', topic: 'login' }],
    [['sessions', '--workspace'], { type: 'error', code: 'USAGE', message: '--workspace needs a directory', hint: 'use: dsh sessions [--json] [--workspace DIR] [--profile NAME]' }],
    [['sessions', 'x'], { type: 'error', code: 'USAGE', message: 'unknown argument "x" for dsh sessions', hint: 'use: dsh sessions [--json] [--workspace DIR] [--profile NAME]' }],
    [['--profile=headless', '--model', 'x', 'do it'], { type: 'run', profile: 'headless', patches: [], argv: ['--model', 'x', 'do it'] }],
    [['web', '--port', '1'], { type: 'run', profile: 'web', patches: [], argv: ['--port', '1'] }],
    [['--profile', 'x', 'web'], { type: 'run', profile: 'x', patches: [], argv: ['web'] }],
    [['web', '--profile', 'x'], { type: 'error', code: 'USAGE', message: '`web` is an alias of --profile web; do not combine it with --profile', hint: 'see dsh --help' }],
    [['sdk', '--print-schema'], { type: 'run', profile: 'sdk', patches: [], argv: ['--print-schema'] }],
    [['sdk', '--profile', 'x'], { type: 'error', code: 'USAGE', message: '`sdk` is an alias of --profile sdk; do not combine it with --profile', hint: 'see dsh --help' }],
    [['--profile', 'a', '--profile', 'b'], { type: 'error', code: 'USAGE', message: '--profile given twice', hint: 'see dsh --help' }],
    [['--dump-config'], { type: 'run', patches: [], dump: 'config', argv: [] }],
    [['--profile', 'web', '--dump-default-config'], { type: 'run', profile: 'web', patches: [], dump: 'default', argv: [] }],
    [['--patch', 'p', '--', '--help'], { type: 'run', patches: ['p'], argv: ['--help'] }],
    [['--patch'], { type: 'error', code: 'USAGE', message: '--patch needs a file', hint: 'see dsh --help' }],
    [['task', 'plugin'], { type: 'run', patches: [], argv: ['task', 'plugin'] }],
    [['plugin', '--profile', 't', 'add', './x', 'y@1'], { type: 'plugin', profile: 't', action: 'add', packages: ['./x', 'y@1'] }],
    [['--profile', 't', 'plugin', 'list'], { type: 'plugin', profile: 't', action: 'list', packages: [] }],
    [['plugin', 'remove', 'x', '--profile', 't'], { type: 'plugin', profile: 't', action: 'remove', packages: ['x'] }],
    [['plugin', 'add'], { type: 'error', code: 'USAGE', message: 'dsh plugin add needs a package (a name, name@version, a directory or a tarball)', hint: 'see dsh --help' }],
    [['plugin', 'frob'], { type: 'error', code: 'USAGE', message: 'unknown plugin command "frob"', hint: 'use: dsh plugin --profile NAME add|remove|list [PKG...]' }],
    [['login'], { type: 'login', provider: 'deepseek' }],
    [['login', '--provider=anthropic'], { type: 'login', provider: 'anthropic' }],
    [['login', 'x'], { type: 'error', code: 'USAGE', message: 'unknown argument "x" for dsh login', hint: 'use: dsh login [--provider NAME]' }],
  ]
  it.each(cases)('%j', (argv, expected) => {
    expect(parseArgs(argv)).toEqual(expected)
  })
})
