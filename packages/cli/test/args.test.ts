import { describe, expect, it } from 'vitest'
import { parseArgs } from '../src/args.js'

describe('parseArgs', () => {
  const cases: [string[], unknown][] = [
    [[], { type: 'run', patches: [], argv: [] }],
    [['--help'], { type: 'help' }],
    [['-h'], { type: 'help' }],
    [['web', '--help'], { type: 'help', topic: 'web' }],
    [['--version'], { type: 'version' }],
    [['--profile', 'acp', '--patch', 'a.yml', '--patch=b.yml', 'task', '--help'], { type: 'run', profile: 'acp', patches: ['a.yml', 'b.yml'], argv: ['task', '--help'] }],
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
