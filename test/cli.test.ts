// The command-line contract: help, version, exit codes and the errors for bad input.
import t from 'tap';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { main } from '../src/cli/index.js';
import { commandArgs, parseCommandArgs, splitCommand, type GlobalFlags } from '../src/cli/args.js';
import { commands } from '../src/cli/commands.js';
import { agentOptions } from '../src/cli/options.js';
import { bundle, cleanEnv, run, runPinclaw, tempDir } from './support/proc.js';

function capture(env: NodeJS.ProcessEnv = {}) {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (l: string) => out.push(l), err: (l: string) => err.push(l), env }, out, err };
}

t.test('--help lists every command of the contract', async (t) => {
  const c = capture();
  t.equal(await main(['--help'], c.io), 0);
  const text = c.out.join('\n');
  for (const name of ['gateway', 'agent', 'tool', 'memory', 'board', 'cron', 'service', 'onboard', 'doctor', 'config', 'sessions', 'pairing', 'audit', 'backup', 'restore', 'tokens', 'status', 'logs', 'mcp', 'skills']) {
    t.match(text, new RegExp(`^  ${name} `, 'm'), `help lists ${name}`);
  }
  t.equal(commands.filter((c) => !c.hidden).length, 23);
  t.notMatch(text, /__tool-script/, 'hidden commands stay out of --help');
});

t.test('usage errors exit 2 and say what was wrong', async (t) => {
  let c = capture();
  t.equal(await main(['gatewya'], c.io), 2);
  t.match(c.err.join('\n'), /unknown command 'gatewya' \(did you mean 'gateway'\?\)/);
  c = capture();
  t.equal(await main(['gateway', '--prot', '1'], c.io), 2);
  t.match(c.err.join('\n'), /Unknown option '--prot'/);
  t.match(c.err.join('\n'), /usage: pinclaw gateway/);
  c = capture();
  t.equal(await main(['config', 'gte'], c.io), 2);
  t.match(c.err.join('\n'), /unknown subcommand 'gte' \(did you mean 'get'\?\)/);
  c = capture();
  t.equal(await main([], c.io), 2, 'no command at all is a usage error');
  c = capture();
  t.equal(await main(['--home'], c.io), 2);
  t.match(c.err.join('\n'), /Option '--home <value>' argument missing/);
  const home = join(tempDir(), 'home');
  c = capture({ PINCLAW_HOME: home });
  t.equal(await main(['gateway', '--port', '70000'], c.io), 2);
  t.notOk(existsSync(home), 'a bad flag is refused before the home is touched');
  t.match(c.err.join('\n'), /--port must be an integer between 0 and 65535, got '70000'/);
});

t.test('global flags are read in the same strict pass as the command\'s own', async (t) => {
  let c = capture();
  t.equal(await main(['agent', '-m', '--yes'], c.io), 2, '-m takes no flag as its text by accident');
  t.match(c.err.join('\n'), /Option '-m' argument is ambiguous[\s\S]*use '--message=-XYZ' or '-m-XYZ'/);
  t.match(c.err.join('\n'), /usage: pinclaw agent/);
  c = capture();
  t.equal(await main(['-yV'], c.io), 0, 'grouped short flags');
  t.match(c.out.join('\n'), /^pinclaw \d+\.\d+\.\d+$/);
  c = capture();
  t.equal(await main(['--', 'x'], c.io), 2);
  t.match(c.err.join('\n'), /unknown command 'x'/, '-- ends the options; x is the command');
  c = capture();
  t.equal(await main(['--bogus', 'doctor'], c.io), 2);
  t.match(c.err.join('\n'), /Unknown option '--bogus'/);
  c = capture();
  t.equal(await main(['doctor', '--bogus'], c.io), 2);
  t.match(c.err.join('\n'), /Unknown option '--bogus'[\s\S]*usage: pinclaw doctor/);
  c = capture();
  t.equal(await main(['doctor', '-yx'], c.io), 2, 'a group with an unknown letter');
  t.match(c.err.join('\n'), /Unknown option '-x'/);
  // --home with = and without, before and after the command; --json after a subcommand.
  for (const argv of [['--home=H', 'config', 'path', '--json'], ['config', '--home', 'H', 'path', '--json'], ['config', 'path', '--json', '--home=H']]) {
    const home = join(tempDir(), 'home');
    c = capture();
    const args = argv.map((a) => a.replace(/^H$/, home).replace(/=H$/, `=${home}`));
    t.equal(await main(args, c.io), 0, args.join(' '));
    t.same(JSON.parse(c.out.join('\n')), { path: join(home, 'config.json') });
  }
});

const noFlags = (): GlobalFlags => ({ json: false, help: false, version: false, yes: false, verbose: false });

t.test('what a command module gets back reads as the one strict pass read it', async (t) => {
  // The command parses again with its own options only; values and operands must not change.
  const reread = (argv: string[]) => {
    const flags = noFlags();
    const { args, positionals } = commandArgs(argv, agentOptions, 'u', flags);
    const again = parseCommandArgs(args, agentOptions, 'u');
    t.same(again.positionals, positionals, `${JSON.stringify(argv)}: the same operands`);
    return { flags, values: { ...again.values }, positionals };
  };
  t.same(reread(['-ymhello', 'foo']), { flags: { ...noFlags(), yes: true }, values: { message: 'hello' }, positionals: ['foo'] }, 'a global in a group with an inline value');
  t.same(reread(['--message=--yes']), { flags: noFlags(), values: { message: '--yes' }, positionals: [] }, 'a flag-like message written as --message=');
  t.same(reread(['-m', '', '-y']), { flags: { ...noFlags(), yes: true }, values: { message: '' }, positionals: [] });
  t.same(reread(['-m-x', '--json', '--', '-y', 'z']), { flags: { ...noFlags(), json: true }, values: { message: '-x' }, positionals: ['-y', 'z'] }, 'after -- a flag is an operand');
  t.same(reread(['-s', 'k', '--home', '/h', '-m', 'a b']), { flags: { ...noFlags(), home: '/h' }, values: { session: 'k', message: 'a b' }, positionals: [] });
  t.same(commandArgs(['x', '--session=k', 'y', '--', '-z'], agentOptions, 'u', noFlags()).args, ['x', '--session=k', '--', 'y', '-z'], 'the first operand stays first (the subcommand)');
  t.same(splitCommand(['--json', '--', 'agent', '--help']), { flags: { ...noFlags(), json: true }, command: 'agent', args: ['--', '--help'] }, 'a -- before the command holds for its arguments too');
  t.same(splitCommand(['agent', '--', '-m']), { flags: noFlags(), command: 'agent', args: ['--', '-m'] });
});

t.test('global flags after the command, -m edge cases, -- and --version anywhere', async (t) => {
  const home = join(tempDir(), 'home');
  let c = capture({ PINCLAW_HOME: home });
  t.equal(await main(['agent', '-ymhello', 'foo'], c.io), 2, 'the grouped -m keeps its inline value; foo is an operand');
  t.match(c.err.join('\n'), /unexpected argument 'foo'/);
  c = capture({ PINCLAW_HOME: home });
  t.equal(await main(['agent', '-m', ''], c.io), 2);
  t.match(c.err.join('\n'), /-m needs a non-empty message/);
  c = capture({ PINCLAW_HOME: home });
  t.equal(await main(['--', 'doctor', '--help'], c.io), 2, 'after --, --help is an operand of the command');
  t.match(c.err.join('\n'), /unexpected argument '--help'\nusage: pinclaw doctor/);
  c = capture({ PINCLAW_HOME: home });
  t.equal(await main(['doctor', '-V'], c.io), 0, '--version after a command prints the version');
  t.same(c.out, [c.out[0]]);
  t.match(c.out[0], /^pinclaw \d+\.\d+\.\d+$/);
  c = capture({ PINCLAW_HOME: home });
  t.equal(await main(['agent', '--help', '-s', 'k'], c.io), 0);
  t.match(c.out.join('\n'), /^usage: pinclaw agent /);
  c = capture({ PINCLAW_HOME: home });
  t.equal(await main(['config', 'get', '--secret', 'gateway.port'], c.io), 2);
  t.match(c.err.join('\n'), /config get: --secret is only for 'config set'/);
  c = capture({ PINCLAW_HOME: home });
  t.equal(await main(['config', '--', '-x'], c.io), 2);
  t.match(c.err.join('\n'), /unknown subcommand '-x'/);
  t.notOk(existsSync(home), 'none of these touched the home');
  // A command not built yet still reads the global flags after its name.
  const later = commands.find((cmd) => cmd.arrives);
  if (later) {
    c = capture({ PINCLAW_HOME: home });
    t.equal(await main([later.name, '--help'], c.io), 0, `${later.name} --help`);
    t.equal(c.out.join('\n'), `usage: ${later.usage}\n${later.summary}`);
  }
});

t.test('-- lets an operand start with a dash', async (t) => {
  const home = tempDir();
  let c = capture({ PINCLAW_HOME: home });
  t.equal(await main(['sessions', 'show', '--', '-odd-key'], c.io), 1);
  t.same(c.err, ["pinclaw: no session '-odd-key'"]);
  c = capture({ PINCLAW_HOME: home });
  t.equal(await main(['config', 'set', '--', 'gateway.port', '-1'], c.io), 78, 'the value -1 reaches the config check');
  t.match(c.err.join('\n'), /gateway\.port/);
  c = capture({ PINCLAW_HOME: home });
  // (agent.model would refuse it now: "--secret" names no provider; a session name takes any text)
  t.equal(await main(['config', 'set', '--', 'heartbeat.session', '--secret'], c.io), 0, 'after -- "--secret" is the value, not the flag');
  c = capture({ PINCLAW_HOME: home });
  t.equal(await main(['config', '--json', 'get', 'heartbeat.session'], c.io), 0);
  t.same(c.out, ['"--secret"']);
});

t.test('the bundle reads global flags the same way', async (t) => {
  const env = cleanEnv({ PINCLAW_HOME: join(tempDir(), 'home') });
  const ambiguous = runPinclaw(['agent', '-m', '--yes'], { env });
  t.equal(ambiguous.code, 2);
  t.match(ambiguous.stderr, /Option '-m' argument is ambiguous/);
  const grouped = runPinclaw(['-yV'], { env });
  t.equal(grouped.code, 0);
  t.match(grouped.stdout, /^pinclaw \d+\.\d+\.\d+\n$/);
  const terminated = runPinclaw(['--', 'x'], { env });
  t.equal(terminated.code, 2);
  t.match(terminated.stderr, /unknown command 'x'/);
  const unknown = runPinclaw(['tokens', '--frobnicate'], { env });
  t.equal(unknown.code, 2);
  t.match(unknown.stderr, /Unknown option '--frobnicate'/);
});

t.test('commands of later capabilities say so and exit 1', async (t) => {
  const later = commands.find((cmd) => cmd.arrives);
  if (!later) return t.pass('every command of the contract is built');
  const c = capture();
  t.equal(await main([later.name, ...(later.subcommands ? [later.subcommands[0]!] : [])], c.io), 1);
  t.match(c.err.join('\n'), `pinclaw ${later.name}: not available yet in this version (arrives with ${later.arrives})`);
});

t.test('the bundle: --version and --help touch neither the home directory nor the addon', async (t) => {
  const home = join(tempDir(), 'home');
  for (const flag of ['--version', '--help']) {
    const r = runPinclaw([flag], { env: cleanEnv({ PINCLAW_HOME: home }) });
    t.equal(r.code, 0, `${flag} exits 0`);
  }
  t.match(runPinclaw(['--version']).stdout, /^pinclaw \d+\.\d+\.\d+\n$/);
  t.notOk(existsSync(home), 'no home, no database, no extracted addon');
});

t.test('malformed config JSON: line and column, exit 78', async (t) => {
  const home = tempDir();
  writeFileSync(join(home, 'config.json'), '{\n  "gateway": {\n    "port": 80,,\n  }\n}\n');
  const r = runPinclaw(['config', 'validate'], { env: cleanEnv({ PINCLAW_HOME: home }) });
  t.equal(r.code, 78);
  t.match(r.stdout + r.stderr, `${join(home, "config.json")}:3:16`);
  const g = runPinclaw(['gateway', '--port', '0'], { env: cleanEnv({ PINCLAW_HOME: home }) });
  t.equal(g.code, 78, 'the gateway refuses to start on a broken config');
});

t.test('an invalid config value names the key path, exit 78', async (t) => {
  const home = tempDir();
  writeFileSync(join(home, 'config.json'), JSON.stringify({ gateway: { port: 'eighty' }, log: { levle: 'info' } }));
  const r = runPinclaw(['doctor'], { env: cleanEnv({ PINCLAW_HOME: home }) });
  t.equal(r.code, 1, 'doctor reports the broken config as a failed check');
  t.match(r.stdout, /FAIL  config: .*gateway\.port: expected an integer/);
  const g = runPinclaw(['gateway'], { env: cleanEnv({ PINCLAW_HOME: home }) });
  t.equal(g.code, 78);
  t.match(g.stderr, /gateway\.port: expected an integer between 0 and 65535, found string "eighty"/);
  t.match(g.stderr, /log\.levle: unknown key \(did you mean 'level'\?\)/);
});

t.test('an unwritable PINCLAW_HOME: which path and why, exit 1', async (t) => {
  const dir = tempDir();
  writeFileSync(join(dir, 'file'), 'not a directory');
  const home = join(dir, 'file', 'home');
  const r = runPinclaw(['gateway', '--port', '0'], { env: cleanEnv({ PINCLAW_HOME: home }) });
  t.equal(r.code, 1);
  t.match(r.stderr, `PINCLAW_HOME ${home} is not writable: a path component is not a directory`);
});

t.test('doctor: provider credentials are reported without a request; a closed pipe is not an error', async (t) => {
  const home = tempDir();
  const none = runPinclaw(['doctor', '--json'], { env: cleanEnv({ PINCLAW_HOME: home }) });
  t.equal(none.code, 0, 'no provider is a warning');
  const check = (out: string) => (JSON.parse(out) as { checks: { name: string; state: string; detail: string }[] }).checks.find((c) => c.name === 'provider')!;
  t.match(check(none.stdout), { state: 'warn', detail: /No model provider is configured/ });
  const some = runPinclaw(['doctor', '--json'], { env: cleanEnv({ PINCLAW_HOME: home, ANTHROPIC_API_KEY: 'sk-x', PINCLAW_AGENT_FALLBACKS: '["openai/llama3"]' }) });
  t.match(check(some.stdout), { state: 'ok', detail: 'anthropic/claude-sonnet-5-5; no credentials for openai/llama3' });
  t.notMatch(some.stdout, 'sk-x', 'the key itself is not shown');
  const piped = run('sh', ['-c', `node ${JSON.stringify(bundle)} doctor | head -1`], { env: cleanEnv({ PINCLAW_HOME: home }) });
  t.equal(piped.code, 0);
  t.equal(piped.stderr, '', 'no EPIPE trace');
});
