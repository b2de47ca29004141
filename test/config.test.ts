import t, { type Test } from 'tap';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, EXIT, UsageError } from '../src/errors.js';
import { resolvePaths, type Paths } from '../src/paths.js';
import {
  defaults,
  describeSchema,
  envVarFor,
  formatIssues,
  getConfigValue,
  loadConfig,
  readConfigFile,
  setConfigValue,
  validateConfig,
} from '../src/config/index.js';
import { applyEnv } from '../src/config/env.js';
import { parseConfigText } from '../src/config/parse.js';
import { runConfig } from '../src/cli/config-command.js';
import type { CliContext } from '../src/cli/context.js';

// Mode assertions below compare exact bits; a restrictive umask would change what a new file gets.
process.umask(0o022);

function tempHome(t: Test): Paths {
  const dir = mkdtempSync(join(tmpdir(), 'pinclaw-config-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return resolvePaths({ home: dir }, {});
}

function writeConfig(paths: Paths, content: unknown): void {
  mkdirSync(paths.home, { recursive: true });
  writeFileSync(paths.config, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
}

function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

t.test('defaults when the file is missing', async (t) => {
  const paths = tempHome(t);
  const config = loadConfig(paths, {});
  t.match(config, {
    gateway: { host: '127.0.0.1', port: 7420 },
    log: { level: 'info' },
    store: { busyTimeoutMs: 5000 },
    native: { enabled: true },
    agent: { model: 'anthropic/claude-sonnet-5-5', fallbacks: [], maxIterations: 20, compactAt: 0.75, keepRecent: 20 },
    conductor: { concurrency: 2 },
    channels: { cli: { debounceMs: 0 } },
  });
  t.same(config.providers, { anthropic: {}, openai: { images: true } }, 'no provider keys by default (the one default: an OpenAI-compatible model takes images)');
  t.same(config, defaults());
  t.notOk('token' in config.gateway, 'no default for the token');
  t.same(readConfigFile(paths.config), {});
});

t.test('partial file: given keys kept, the rest defaulted', async (t) => {
  const paths = tempHome(t);
  writeConfig(paths, { gateway: { port: 8080, token: 'sekrit' }, native: { enabled: false } });
  const config = loadConfig(paths, {});
  t.equal(config.gateway.port, 8080);
  t.equal(config.gateway.host, '127.0.0.1');
  t.equal(config.gateway.token, 'sekrit');
  t.equal(config.native.enabled, false);
  t.equal(config.log.level, 'info');
});

t.test('a wrong type names the exact path, expected and found', async (t) => {
  const { config, errors } = validateConfig({ gateway: { port: 70000 } });
  t.equal(config, undefined);
  t.same(errors, [{ path: 'gateway.port', expected: 'an integer between 0 and 65535', found: 'number 70000' }]);
  t.equal(formatIssues(errors, 'config.json'), 'config.json: gateway.port: expected an integer between 0 and 65535, found number 70000');

  t.same(validateConfig({ gateway: { port: 'abc' } }).errors[0], { path: 'gateway.port', expected: 'an integer between 0 and 65535', found: 'string "abc"' });
  t.same(validateConfig({ gateway: { port: 1.5 } }).errors[0]?.found, 'number 1.5');
  t.same(validateConfig({ log: { level: 'loud' } }).errors[0], { path: 'log.level', expected: 'one of "debug", "info", "warn", "error"', found: 'string "loud"' });
  t.same(validateConfig({ native: { enabled: 'yes' } }).errors[0], { path: 'native.enabled', expected: 'true or false', found: 'string "yes"' });
  t.same(validateConfig({ store: { busyTimeoutMs: -1 } }).errors[0]?.expected, 'an integer >= 0');
  t.same(validateConfig({ gateway: [] }).errors[0], { path: 'gateway', expected: 'an object', found: 'array of 0 items' });
  t.same(validateConfig({ gateway: { host: null } }).errors[0]?.found, 'null');
});

t.test('a secret of the wrong type is not echoed', async (t) => {
  const { errors } = validateConfig({ gateway: { token: 123456 } });
  t.same(errors, [{ path: 'gateway.token', expected: 'a string', found: 'number (hidden)' }]);
});

t.test('unknown keys get a did-you-mean hint', async (t) => {
  const { errors } = validateConfig({ gateway: { prot: 1 }, gatway: {}, zzzzzzzz: 1 });
  t.same(errors[0], { path: 'gateway.prot', expected: "one of 'host', 'port', 'token', 'rateLimit', 'connections'", found: 'unknown key', hint: "did you mean 'port'?" });
  t.equal(errors[1]?.hint, "did you mean 'gateway'?");
  t.equal(errors[2]?.hint, undefined, 'no hint when nothing is close');
  const lines = formatIssues(errors, 'config.json').split('\n');
  t.equal(lines[0], "config.json: gateway.prot: unknown key (did you mean 'port'?)");
  t.equal(lines[1], "config.json: gatway: unknown key (did you mean 'gateway'?)");
  t.equal(lines[2], "config.json: zzzzzzzz: unknown key (expected one of 'gateway', 'log', 'store', 'native', 'providers', 'agent', 'web', 'files', 'sandbox', 'conductor', 'owner', 'heartbeat', 'channels', 'tools', 'board', 'hardware', 'mqtt', 'mcp', 'memory', 'hooks', 'voice', 'service', 'update')");
});

t.test('all errors are collected, not just the first', async (t) => {
  const paths = tempHome(t);
  writeConfig(paths, { gateway: { port: 70000, host: 5, prot: 1 }, log: { level: 'loud' }, store: { busyTimeoutMs: 'x' } });
  const err = configError(() => loadConfig(paths, {}));
  t.equal(err.exitCode, EXIT.config);
  t.equal(err.exitCode, 78);
  const lines = err.message.split('\n');
  t.equal(lines.length, 5);
  for (const path of ['gateway.port', 'gateway.host', 'gateway.prot', 'log.level', 'store.busyTimeoutMs']) {
    t.ok(lines.some((l) => l.startsWith(`${paths.config}: ${path}: `)), `${path} reported`);
  }
});

t.test('malformed JSON gives file, line and column', async (t) => {
  const paths = tempHome(t);

  // V8 reports a position for a trailing comma: the '}' on line 4, column 3.
  writeConfig(paths, '{\n  "gateway": {\n    "port": 7420,\n  }\n}\n');
  let err = configError(() => loadConfig(paths, {}));
  t.equal(err.exitCode, 78);
  t.match(err.message, new RegExp(`^${escape(paths.config)}:4:3: invalid JSON: `));
  t.notMatch(err.message, /position/);

  // No position in V8's message for an unexpected token: the scanner locates it (line 3, column 14).
  writeConfig(paths, '{\n  "log": {\n    "level": }\n  "gateway": { "token": "sekrit" }\n}\n');
  err = configError(() => loadConfig(paths, {}));
  t.match(err.message, new RegExp(`^${escape(paths.config)}:3:14: invalid JSON: Unexpected token`));
  t.notMatch(err.message, /sekrit/, 'the excerpt V8 quotes (which may hold secrets) is dropped');

  // V8 shortens a long excerpt to '..."…"'; that form must be dropped too.
  writeConfig(paths, `{\n  "gateway": { "token": "sekrit", "host": "${'x'.repeat(200)}" },\n  "log": { "level": }\n}\n`);
  err = configError(() => loadConfig(paths, {}));
  t.equal(err.message, `${paths.config}:3:21: invalid JSON: Unexpected token '}'`);

  writeConfig(paths, '');
  err = configError(() => loadConfig(paths, {}));
  t.equal(err.message, `${paths.config}:1:1: invalid JSON: Unexpected end of JSON input`);

  writeConfig(paths, '[1, 2]');
  err = configError(() => loadConfig(paths, {}));
  t.equal(err.message, `${paths.config}: expected a JSON object at the top level, found array of 2 items`);
});

t.test('a "line L column C" message is used as given', async (t) => {
  const parse = JSON.parse;
  t.teardown(() => {
    JSON.parse = parse;
  });
  JSON.parse = () => {
    throw new SyntaxError('Unexpected token } in JSON (line 7 column 2)');
  };
  const err = configError(() => parseConfigText('{}', 'f.json'));
  t.equal(err.message, 'f.json:7:2: invalid JSON: Unexpected token } in JSON');
});

t.test('environment overrides', async (t) => {
  t.equal(envVarFor('gateway.port'), 'PINCLAW_GATEWAY_PORT');
  t.equal(envVarFor('store.busyTimeoutMs'), 'PINCLAW_STORE_BUSY_TIMEOUT_MS');

  const paths = tempHome(t);
  writeConfig(paths, { gateway: { port: 8080 }, native: { enabled: true } });
  const config = loadConfig(paths, { PINCLAW_GATEWAY_PORT: '9000', PINCLAW_NATIVE_ENABLED: '0', PINCLAW_LOG_LEVEL: 'debug', PINCLAW_STORE_BUSY_TIMEOUT_MS: '', PINCLAW_HOME: '/elsewhere' });
  t.equal(config.gateway.port, 9000, 'env wins over the file');
  t.equal(config.native.enabled, false);
  t.equal(config.log.level, 'debug');
  t.equal(config.store.busyTimeoutMs, 5000, 'an empty variable counts as unset');

  const raw = { gateway: { port: 1 } };
  applyEnv(raw, { PINCLAW_GATEWAY_PORT: '2' });
  t.same(raw, { gateway: { port: 1 } }, 'the raw object is not mutated');

  const err = configError(() => loadConfig(paths, { PINCLAW_GATEWAY_PORT: 'abc', PINCLAW_NATIVE_ENABLED: 'maybe', PINCLAW_LOG_LEVEL: 'loud', PINCLAW_STORE_BUSY_TIMEOUT_MS: '-5' }));
  t.equal(err.exitCode, 78);
  t.same(err.message.split('\n').sort(), [
    'env PINCLAW_GATEWAY_PORT: expected an integer, found "abc"',
    'env PINCLAW_LOG_LEVEL: expected one of "debug", "info", "warn", "error", found string "loud"',
    'env PINCLAW_NATIVE_ENABLED: expected true, false, 1 or 0, found "maybe"',
    'env PINCLAW_STORE_BUSY_TIMEOUT_MS: expected an integer >= 0, found number -5',
  ]);
  const range = configError(() => loadConfig(paths, { PINCLAW_GATEWAY_PORT: '70000' }));
  t.equal(range.message, 'env PINCLAW_GATEWAY_PORT: expected an integer between 0 and 65535, found number 70000');
});

t.test('getConfigValue', async (t) => {
  const config = defaults();
  t.equal(getConfigValue(config, 'gateway.port'), 7420);
  t.same(getConfigValue(config, 'log'), { level: 'info' });
  t.equal(getConfigValue(config, 'gateway.token'), undefined);
  t.equal(configError(() => getConfigValue(config, 'gateway.prot')).message, "unknown key 'gateway.prot' (did you mean 'gateway.port'?)");
  t.equal(configError(() => getConfigValue(config, 'port')).message, "unknown key 'port' (did you mean 'gateway.port'?)");
  t.equal(configError(() => getConfigValue(config, 'nope.nothing')).message, "unknown key 'nope.nothing'");
});

/** Where setConfigValue encrypts secrets: the test home's key. */
const keys = (paths: { secretKey: string }) => ({ keyFile: paths.secretKey });

t.test('setConfigValue', async (t) => {
  t.test('creates the directory and a 0600 file holding only what was set', async (t) => {
    const paths = tempHome(t);
    const file = join(paths.home, 'nested', 'config.json');
    setConfigValue(file, 'gateway.port', '8080', keys(paths));
    setConfigValue(file, 'native.enabled', 'false', keys(paths));
    setConfigValue(file, 'log.level', 'debug', keys(paths));
    t.equal(statSync(file).mode & 0o777, 0o600);
    t.same(JSON.parse(readFileSync(file, 'utf8')), { gateway: { port: 8080 }, native: { enabled: false }, log: { level: 'debug' } }, 'no defaults baked in; strings literal');
    t.same(readdirSync(join(paths.home, 'nested')), ['config.json'], 'no temp files left');
  });

  t.test('keeps an existing mode and other content', async (t) => {
    const paths = tempHome(t);
    writeConfig(paths, { log: { level: 'warn' } });
    chmodSync(paths.config, 0o640);
    setConfigValue(paths.config, 'store.busyTimeoutMs', '250', keys(paths));
    t.equal(statSync(paths.config).mode & 0o777, 0o640);
    t.same(readConfigFile(paths.config), { log: { level: 'warn' }, store: { busyTimeoutMs: 250 } });
    t.same(readdirSync(paths.home), ['config.json'], 'no temp files left');
  });

  t.test('refuses invalid values and leaves the file byte-identical', async (t) => {
    const paths = tempHome(t);
    const original = '{ "gateway": { "port": 8080 } }\n';
    writeConfig(paths, original);
    const cases: Array<[string, string, RegExp]> = [
      ['gateway.port', '70000', /gateway\.port: expected an integer between 0 and 65535, found number 70000/],
      ['gateway.port', 'abc', /gateway\.port: expected an integer, found "abc"/],
      ['log.level', 'loud', /log\.level: expected one of/],
      ['native.enabled', 'yes', /native\.enabled: expected true, false, 1 or 0/],
      ['gateway.prot', '1', /unknown key 'gateway\.prot' \(did you mean 'gateway\.port'\?\)/],
      ['gateway', '{"port": 1, "hots": "x"}', /gateway\.hots: unknown key \(did you mean 'host'\?\)/],
    ];
    for (const [key, value, re] of cases) {
      const err = configError(() => setConfigValue(paths.config, key, value, keys(paths)));
      t.match(err.message, re, `${key}=${value}`);
      t.equal(err.exitCode, 78);
      t.equal(readFileSync(paths.config, 'utf8'), original, 'file unchanged');
    }
    t.same(readdirSync(paths.home), ['config.json'], 'no temp files left');
  });

  t.test('refuses to write over an already invalid file', async (t) => {
    const paths = tempHome(t);
    const original = '{ "gateway": { "port": "x" } }';
    writeConfig(paths, original);
    const err = configError(() => setConfigValue(paths.config, 'log.level', 'debug', keys(paths)));
    t.match(err.message, /gateway\.port: expected an integer/);
    t.equal(readFileSync(paths.config, 'utf8'), original);
  });

  t.test('sets a whole section from JSON', async (t) => {
    const paths = tempHome(t);
    setConfigValue(paths.config, 'gateway', '{"host": "0.0.0.0", "port": 80}', keys(paths));
    // The section as written: its nested defaults stay out of the file.
    t.same(readConfigFile(paths.config), { gateway: { host: '0.0.0.0', port: 80 } });
  });
});

t.test('describeSchema lists every leaf with kind, default, env and description', async (t) => {
  const keys = describeSchema();
  t.same(keys.slice(0, 11).map((k) => k.key), ['gateway.host', 'gateway.port', 'gateway.token', 'gateway.rateLimit.perSecond', 'gateway.rateLimit.burst', 'gateway.rateLimit.maxBadTokens', 'gateway.rateLimit.maxBadTokensTotal', 'gateway.connections.max', 'gateway.connections.perAddress', 'gateway.connections.firstRequestSeconds', 'log.level']);
  t.ok(keys.some((k) => k.key === 'providers.anthropic.apiKey' && k.secret && k.env === 'PINCLAW_PROVIDERS_ANTHROPIC_API_KEY'));
  const port = keys.find((k) => k.key === 'gateway.port')!;
  t.match(port, { kind: 'integer', default: 7420, env: 'PINCLAW_GATEWAY_PORT', accepts: 'an integer between 0 and 65535', secret: false });
  const token = keys.find((k) => k.key === 'gateway.token')!;
  t.equal(token.secret, true);
  t.notOk('default' in token);
  for (const k of keys) t.ok(k.description.length > 0, `${k.key} is described`);
});

t.test('docs/configuration.md lists every key with its env var and default', async (t) => {
  const doc = readFileSync(new URL('../docs/configuration.md', import.meta.url), 'utf8');
  for (const k of describeSchema()) {
    const row = doc.split('\n').find((l) => l.startsWith(`| \`${k.key}\` `));
    t.ok(row, `${k.key} has a row`);
    t.match(row ?? '', `\`${k.env}\``);
    t.match(row ?? '', k.default === undefined ? '(none)' : `\`${JSON.stringify(k.default)}\``);
  }
});

function cli(paths: Paths, env: NodeJS.ProcessEnv = {}, json = false) {
  const out: string[] = [];
  const err: string[] = [];
  const ctx: CliContext = { paths, json, out: (l) => out.push(l), err: (l) => err.push(l), env };
  return { ctx, out, err };
}

t.test('runConfig', async (t) => {
  t.test('path', async (t) => {
    const paths = tempHome(t);
    const c = cli(paths);
    t.equal(await runConfig('path', [], c.ctx), 0);
    t.same(c.out, [paths.config]);
  });

  t.test('set then get, with env and secrets', async (t) => {
    const paths = tempHome(t);
    let c = cli(paths);
    t.equal(await runConfig('set', ['gateway.port', '8080'], c.ctx), 0);
    t.same(c.out, ['set gateway.port']);
    t.equal(await runConfig('set', ['gateway.token', 'hunter2'], c.ctx), 0);

    c = cli(paths);
    await runConfig('get', ['gateway.port'], c.ctx);
    await runConfig('get', ['gateway.host'], c.ctx);
    await runConfig('get', ['native.enabled'], c.ctx);
    await runConfig('get', ['gateway.token'], c.ctx);
    await runConfig('get', ['gateway'], c.ctx);
    t.same(c.out, ['8080', '127.0.0.1', 'true', '********', '{"host":"127.0.0.1","port":8080,"token":"********","rateLimit":{"perSecond":50,"burst":100,"maxBadTokens":10,"maxBadTokensTotal":30},"connections":{"firstRequestSeconds":10}}']);

    c = cli(paths, {}, true);
    await runConfig('get', ['gateway.host'], c.ctx);
    t.same(c.out, ['"127.0.0.1"'], '--json prints JSON always');

    c = cli(paths, { PINCLAW_GATEWAY_PORT: '9999' });
    await runConfig('get', ['gateway.port'], c.ctx);
    t.same(c.out, ['9999'], 'get shows the effective value');
    await runConfig('set', ['gateway.port', '1234'], c.ctx);
    t.same(c.err, ['note: PINCLAW_GATEWAY_PORT is set in the environment and overrides the file']);
    t.match(readConfigFile(paths.config), { gateway: { port: 1234, token: /^enc:v1:/ } }, 'the secret is stored encrypted without --secret');
    t.notMatch(readFileSync(paths.config, 'utf8'), 'hunter2');
  });

  t.test('an empty secret is shown as it is', async (t) => {
    const paths = tempHome(t);
    writeConfig(paths, { gateway: { token: '' } });
    const c = cli(paths, {}, true);
    await runConfig('get', ['gateway.token'], c.ctx);
    t.same(c.out, ['""']);
  });

  t.test('validate', async (t) => {
    const paths = tempHome(t);
    let c = cli(paths);
    t.equal(await runConfig('validate', [], c.ctx), 0, 'a missing file is valid');
    t.same(c.out, [`ok: ${paths.config}`]);

    writeConfig(paths, { gateway: { prot: 1, port: -1 } });
    c = cli(paths);
    t.equal(await runConfig('validate', [], c.ctx), 78);
    t.same(c.out, [
      `${paths.config}: gateway.port: expected an integer between 0 and 65535, found number -1`,
      `${paths.config}: gateway.prot: unknown key (did you mean 'port'?)`,
    ]);

    // Settings only the tools can judge are checked too, without running anything.
    for (const [config, problem] of [
      [{ files: { roots: ['relative/dir'] } }, /files\.roots\[0\]: expected an absolute path/],
      [{ web: { search: { provider: 'searxng' } } }, /web\.search\.baseUrl/],
      [{ tools: { controlChats: ['nochat'] } }, /tools\.controlChats\[0\]: expected "channel:chatId"/],
    ] as const) {
      writeConfig(paths, config);
      c = cli(paths);
      t.equal(await runConfig('validate', [], c.ctx), 78, JSON.stringify(config));
      t.match(c.out.join('\n'), problem);
    }
  });

  t.test('usage errors', async (t) => {
    const paths = tempHome(t);
    const c = cli(paths);
    await t.rejects(runConfig('get', [], c.ctx), UsageError);
    await t.rejects(runConfig('set', ['gateway.port'], c.ctx), { exitCode: 2, message: /usage: pinclaw config set \[--plain\] KEY VALUE/ });
    await t.rejects(runConfig('path', ['extra'], c.ctx), UsageError);
    await t.rejects(runConfig('frobnicate', [], c.ctx), { exitCode: 2, message: /usage: pinclaw config path \| show \| get KEY \| set \[--plain\] KEY VALUE \| unset KEY \| validate/ });
    // A mistyped key is a typing mistake like a mistyped command: 2, not 78 (the config is fine).
    await t.rejects(runConfig('get', ['gateway.prot'], c.ctx), { exitCode: 2, message: /did you mean 'gateway\.port'/ });
  });

  t.test('a value starting with a dash after --', async (t) => {
    const paths = tempHome(t);
    const c = cli(paths);
    await t.rejects(runConfig('set', ['--', 'store.busyTimeoutMs', '-1'], c.ctx), { exitCode: 78, message: /expected an integer >= 0, found number -1/ });
    // (gateway.host would refuse it now: an address beyond loopback needs gateway.token)
    t.equal(await runConfig('set', ['--', 'heartbeat.session', '-weird'], c.ctx), 0);
    t.same(readConfigFile(paths.config), { heartbeat: { session: '-weird' } });
  });
});

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
