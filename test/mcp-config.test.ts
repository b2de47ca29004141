// mcp.servers: a map the owner names (the schema's record kind), errors that name the server, the
// values of env and headers kept as secrets (encrypted at rest, redacted), the checks the schema
// cannot express, and `config set` of one server by its dot path.
import t, { type Test } from 'tap';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatIssues, loadConfig, readConfigFile, setConfigValue, validateConfig } from '../src/config/index.js';
import { secretValues } from '../src/config/redact.js';
import { ConfigError } from '../src/errors.js';
import { checkMcpConfig } from '../src/mcp/config.js';
import { resolvePaths } from '../src/paths.js';
import { runConfig } from '../src/cli/config-command.js';
import type { CliContext } from '../src/cli/context.js';

function home(t: Test) {
  const dir = mkdtempSync(join(tmpdir(), 'pinclaw-mcp-config-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return resolvePaths({ home: dir }, {});
}

t.test('validation names the server and the key; defaults are filled in', async (t) => {
  const ok = validateConfig({ mcp: { servers: { home: { command: 'home-mcp' } } } });
  t.same(ok.errors, []);
  t.match(ok.config!.mcp.servers.home, { enabled: true, args: [], tools: ['*'], callTimeoutMs: 60000, listTimeoutMs: 10000, sandbox: true, network: false });
  const bad = validateConfig({ mcp: { servers: { home: { command: 7, callTimeoutMs: 700000, tool: ['x'] }, '9lives': {}, cal: 'x' } } });
  const text = formatIssues(bad.errors);
  t.match(text, /mcp\.servers\.home\.command: expected a string, found number 7/);
  t.match(text, /mcp\.servers\.home\.callTimeoutMs: expected an integer between 100 and 600000, found number 700000/);
  t.match(text, /mcp\.servers\.home\.tool: unknown key \(did you mean 'tools'\?\)/);
  t.match(text, /mcp\.servers\.9lives: expected a name of letters, digits, _ and - starting with a letter/);
  t.match(text, /mcp\.servers\.cal: expected an object, found string "x"/);
});

t.test('what the schema cannot say: stdio or HTTP, one of them, with what fits it', async (t) => {
  const check = (servers: Record<string, unknown>): string => {
    const { config, errors } = validateConfig({ mcp: { servers } });
    t.same(errors, []);
    try {
      checkMcpConfig(config!);
      return '';
    } catch (err) {
      t.type(err, ConfigError);
      return (err as Error).message;
    }
  };
  t.equal(check({ a: { command: 'x' }, b: { url: 'https://h/mcp' } }), '');
  t.match(check({ both: { command: 'x', url: 'http://h/mcp' } }), 'mcp.servers.both: set command (stdio) or url (Streamable HTTP), not both');
  t.match(check({ none: { enabled: false } }), 'mcp.servers.none: set command (a stdio server) or url (a Streamable HTTP server)');
  t.match(check({ f: { url: 'ftp://h/x' } }), 'mcp.servers.f.url: expected an http:// or https:// URL, found "ftp://h/x"');
  t.match(check({ h: { url: 'http://h/mcp', env: { A: 'b' } } }), 'mcp.servers.h: env, args and cwd are for stdio servers');
  t.match(check({ s: { command: 'x', headers: { A: 'b' } } }), 'mcp.servers.s.headers: for HTTP servers (url)');
  t.match(check({ p: { command: 'x', paths: ['rel/dir'] } }), "mcp.servers.p: 'rel/dir' in paths/writePaths is not an absolute path");
});

t.test('env and header values are secrets: encrypted on write, decrypted on load, redacted, masked', async (t) => {
  const paths = home(t);
  setConfigValue(paths.config, 'mcp.servers.ha', JSON.stringify({ url: 'https://ha.lan/mcp', headers: { Authorization: 'Bearer sk-ha-123456' } }), { keyFile: paths.secretKey });
  setConfigValue(paths.config, 'mcp.servers.gh', JSON.stringify({ command: 'gh-mcp', env: { GITHUB_TOKEN: 'ghp_secret_abcdef' } }), { keyFile: paths.secretKey });
  const file = readFileSync(paths.config, 'utf8');
  t.notMatch(file, 'sk-ha-123456');
  t.notMatch(file, 'ghp_secret_abcdef');
  t.match(readConfigFile(paths.config), { mcp: { servers: { ha: { url: 'https://ha.lan/mcp', headers: { Authorization: /^enc:v1:/ } }, gh: { command: 'gh-mcp', env: { GITHUB_TOKEN: /^enc:v1:/ } } } } });
  const config = loadConfig(paths, {});
  t.equal(config.mcp.servers.ha!.headers.Authorization, 'Bearer sk-ha-123456', 'decrypted for use');
  t.equal(config.mcp.servers.gh!.env.GITHUB_TOKEN, 'ghp_secret_abcdef');
  const secrets = secretValues(config, {});
  t.ok(secrets.includes('Bearer sk-ha-123456') && secrets.includes('ghp_secret_abcdef'), 'the redactor knows them');
  const out: string[] = [];
  const ctx: CliContext = { paths, json: false, out: (l) => out.push(l), err: () => undefined, env: {} };
  await runConfig('show', [], ctx);
  t.notMatch(out.join('\n'), /sk-ha-123456|ghp_secret_abcdef|enc:v1/, 'config show masks them');
  t.match(out.join('\n'), /\*{8}/);
});
