// Secrets at rest in the config: AES-256-GCM under a 0600 key file; never plaintext on disk.
import t from 'tap';
import { chmodSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { decryptSecret, encryptSecret, secretKey } from '../src/config/secrets.js';
import { createRedactor, redact, secretValues } from '../src/config/redact.js';
import { defaults, loadConfig, unreadableSecrets } from '../src/config/index.js';
import { applyOnboard, planOnboard } from '../src/ops/onboard.js';
import { resolvePaths } from '../src/paths.js';
import { cleanEnv, runPinclaw, runPinclawAsync, tempDir } from './support/proc.js';

t.test('set --secret encrypts; the runtime reads the plaintext; get masks it', async (t) => {
  const home = tempDir();
  const env = cleanEnv({ PINCLAW_HOME: home });
  const set = runPinclaw(['config', 'set', '--secret', 'providers.anthropic.apiKey', 'sk-ant-very-secret-123'], { env });
  t.equal(set.code, 0, set.stderr);
  const file = readFileSync(join(home, 'config.json'), 'utf8');
  t.notMatch(file, 'sk-ant-very-secret-123', 'no plaintext in the file');
  t.match(JSON.parse(file), { providers: { anthropic: { apiKey: /^enc:v1:[A-Za-z0-9+/=]+$/ } } });
  t.equal(statSync(join(home, 'secret.key')).mode & 0o777, 0o600);
  t.equal(statSync(join(home, 'secret.key')).size, 32);
  t.equal(runPinclaw(['config', 'get', 'providers.anthropic.apiKey'], { env }).stdout, '********\n');
  const doctor = JSON.parse(runPinclaw(['doctor', '--json'], { env }).stdout) as { checks: { name: string; state: string }[] };
  t.match(doctor.checks.find((c) => c.name === 'provider'), { state: 'ok' }, 'the decrypted key makes the provider usable');
  t.equal(runPinclaw(['config', 'set', '--secret', 'gateway.port', '80'], { env }).code, 78, 'only secret fields');
});

t.test('a tampered value or a wrong key fails with the key named, exit 78', async (t) => {
  const home = tempDir();
  const env = cleanEnv({ PINCLAW_HOME: home });
  runPinclaw(['config', 'set', '--secret', 'gateway.token', 'tok-abcdef'], { env });
  const file = join(home, 'config.json');
  const cfg = JSON.parse(readFileSync(file, 'utf8')) as { gateway: { token: string } };
  const raw = Buffer.from(cfg.gateway.token.slice('enc:v1:'.length), 'base64');
  raw[raw.length - 1] = raw[raw.length - 1]! ^ 1;
  writeFileSync(file, JSON.stringify({ gateway: { token: `enc:v1:${raw.toString('base64')}` } }));
  const r = runPinclaw(['gateway', '--port', '0'], { env });
  t.equal(r.code, 78);
  t.match(r.stderr, /gateway\.token: cannot decrypt \(the value was altered/);
  chmodSync(join(home, 'secret.key'), 0o644);
  const loose = runPinclaw(['config', 'validate'], { env });
  t.equal(loose.code, 78);
  t.match(loose.stdout, /secret\.key has mode 0644; it must be readable by its owner only/);
});

t.test('encrypt/decrypt round trip, fresh IVs, redaction', async (t) => {
  const key = secretKey(join(tempDir(), 'secret.key'), true);
  const a = encryptSecret('hunter2', key);
  t.not(a, encryptSecret('hunter2', key), 'a fresh IV each time');
  t.equal(decryptSecret(a, key, 'k'), 'hunter2');
  t.throws(() => decryptSecret(a, Buffer.alloc(32), 'providers.openai.apiKey'), /providers\.openai\.apiKey: cannot decrypt/);
  t.throws(() => decryptSecret('enc:v9:xx', key, 'k'), /unknown encrypted format/);
  t.equal(redact('key=hunter2 and hunter2', ['hunter2']), 'key=[redacted] and [redacted]');
});

t.test('concurrent first uses agree on one key', async (t) => {
  const home = tempDir();
  const env = cleanEnv({ PINCLAW_HOME: home });
  // Each process may create the key; a second key replacing the first would make values undecryptable.
  const runs = await Promise.all([1, 2, 3, 4, 5, 6].map((i) => runPinclawAsync(['config', 'set', '--secret', 'gateway.token', `token-number-${i}`], { env })));
  for (const r of runs) t.equal(r.code, 0, r.stderr);
  const get = runPinclaw(['--json', 'config', 'validate'], { env });
  t.equal(get.code, 0, get.stdout);
  const a = secretKey(join(home, 'secret.key'), true);
  t.same(secretKey(join(home, 'secret.key'), true), a, 'an existing key is read, not replaced');
  t.same(readdirSync(home).filter((f) => f.includes('.tmp')), [], 'no temporary files left');
});

t.test('redaction: configured values and credential shapes', async (t) => {
  const r = createRedactor(['my-gateway-token', 'abc']);
  t.equal(r('token my-gateway-token, short abc'), 'token [redacted], short abc', 'values under 4 characters are left to the patterns');
  t.equal(r('x-api-key: sk-ant-api03-AbCdEf_123456-xyz'), 'x-api-key: [redacted]');
  t.equal(r('OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwx'), 'OPENAI_API_KEY=[redacted]');
  t.equal(r('Authorization: Bearer eyJhbGciOi.J9.abc'), 'Authorization: Bearer [redacted]');
  t.equal(r('bot 123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0 ok'), 'bot [redacted] ok');
  t.equal(r('-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1r\n-----END OPENSSH PRIVATE KEY-----'), '[redacted]');
  t.equal(r('an ordinary sentence with sk- and Bearer words'), 'an ordinary sentence with sk- and Bearer words');
  const longer = createRedactor(['secret', 'secret-and-more']);
  t.equal(longer('secret-and-more'), '[redacted]', 'a secret containing another is replaced whole');
});

t.test('secretValues: decrypted secret fields and provider keys from the environment', async (t) => {
  const config = defaults();
  config.gateway.token = 'gw-token-1';
  config.providers.openai.apiKey = 'oa-key-22';
  t.same(secretValues(config, { ANTHROPIC_API_KEY: 'env-key-333', HOME: '/root' }), ['gw-token-1', 'oa-key-22', 'env-key-333']);
});

t.test('secrets inside lists (mqtt.fleet.callers[].key): decrypted on load, redacted, masked', async (t) => {
  const home = tempDir();
  const env = cleanEnv({ PINCLAW_HOME: home });
  const key = secretKey(join(home, 'secret.key'), true);
  writeFileSync(join(home, 'config.json'), JSON.stringify({ mqtt: { password: encryptSecret('broker-pw-9', key), fleet: { callers: [{ node: 'shed', key: encryptSecret('shed-key-4444', key) }, { node: 'barn', key: 'barn-plain-555' }] } } }));
  const config = loadConfig(resolvePaths({ home }, {}), {});
  t.equal(config.mqtt.password, 'broker-pw-9');
  t.same(config.mqtt.fleet.callers, [{ node: 'shed', key: 'shed-key-4444' }, { node: 'barn', key: 'barn-plain-555' }]);
  t.same(secretValues(config, {}), ['broker-pw-9', 'shed-key-4444', 'barn-plain-555']);
  const shown = runPinclaw(['config', 'get', 'mqtt.fleet.callers'], { env });
  t.equal(shown.code, 0, shown.stderr);
  t.notMatch(shown.stdout, /shed-key|barn-plain|enc:/);
  t.match(shown.stdout, /shed/);
  writeFileSync(join(home, 'config.json'), JSON.stringify({ mqtt: { fleet: { callers: [{ node: 'shed', key: 'enc:v1:AAAA' }] } } }));
  t.throws(() => loadConfig(resolvePaths({ home }, {}), {}, { secrets: 'required' }), /mqtt\.fleet\.callers\[0\]\.key: encrypted value is truncated/);
  const lenient = loadConfig(resolvePaths({ home }, {}), {});
  t.same(lenient.mqtt.fleet.callers, [{ node: 'shed' }], 'by default the unreadable secret is left unset');
  t.same(unreadableSecrets(lenient), [{ path: 'mqtt.fleet.callers[0].key', reason: 'encrypted value is truncated' }], 'and listed');
});

t.test('config set stores a secret field encrypted without --secret; --plain keeps it in clear, with a warning', async (t) => {
  const home = tempDir();
  const env = cleanEnv({ PINCLAW_HOME: home });
  const file = join(home, 'config.json');
  // The README's own examples, without --secret.
  const api = runPinclaw(['config', 'set', 'providers.anthropic.apiKey', 'sk-ant-api03-plainly-typed-1'], { env });
  t.equal(api.code, 0, api.stderr);
  t.equal(api.stdout, 'set providers.anthropic.apiKey (stored encrypted)\n');
  t.equal(runPinclaw(['config', 'set', 'gateway.token', 'tok-from-readme-22'], { env }).code, 0);
  t.notMatch(readFileSync(file, 'utf8'), /sk-ant-api03-plainly-typed-1|tok-from-readme-22/, 'neither value is in the file');
  t.match(JSON.parse(readFileSync(file, 'utf8')), { gateway: { token: /^enc:v1:/ }, providers: { anthropic: { apiKey: /^enc:v1:/ } } });
  const config = loadConfig(resolvePaths({ home }, {}), {});
  t.equal(config.gateway.token, 'tok-from-readme-22', 'the runtime reads the value');
  t.equal(config.providers.anthropic.apiKey, 'sk-ant-api03-plainly-typed-1');

  const plain = runPinclaw(['config', 'set', '--plain', 'channels.telegram.token', '12345:plain-token-333'], { env });
  t.equal(plain.code, 0, plain.stderr);
  t.match(plain.stderr, /^warning: channels\.telegram\.token is stored in clear in .*config\.json: anyone who can read the file or a copy of it can use it; pinclaw doctor warns about it, and the next write of the config encrypts it\n$/);
  t.match(readFileSync(file, 'utf8'), /"token": "12345:plain-token-333"/, '--plain: in clear, as asked');
  const doctor = JSON.parse(runPinclaw(['doctor', '--json'], { env }).stdout) as { checks: { name: string; state: string; detail: string }[] };
  t.match(doctor.checks.find((c) => c.name === 'secrets'), { state: 'warn', detail: /stored in clear in .*config\.json: channels\.telegram\.token; the next write of the config encrypts them \(pinclaw config set KEY VALUE/ });

  t.equal(runPinclaw(['config', 'set', '--plain', 'gateway.port', '80'], { env }).code, 78, '--plain only for secret fields');
  t.equal(runPinclaw(['config', 'set', '--plain', '--secret', 'gateway.token', 'x'], { env }).code, 2, '--plain and --secret contradict');
  const next = runPinclaw(['config', 'set', 'gateway.port', '7555'], { env });
  t.equal(next.code, 0, next.stderr);
  t.match(next.stderr, /note: encrypted the secrets .*config\.json held in clear: channels\.telegram\.token/);
  t.notMatch(readFileSync(file, 'utf8'), /plain-token-333/, 'the next write encrypted it');
  const after = JSON.parse(runPinclaw(['doctor', '--json'], { env }).stdout) as { checks: { name: string; state: string; detail: string }[] };
  t.match(after.checks.find((c) => c.name === 'secrets'), { state: 'ok', detail: /^3 stored encrypted/ });
});

t.test('a config with secrets in clear: doctor names them until the first write, which encrypts every one', async (t) => {
  const home = tempDir();
  const env = cleanEnv({ PINCLAW_HOME: home });
  const file = join(home, 'config.json');
  const clear = { gateway: { token: 'gw-clear-token-1' }, providers: { openai: { apiKey: 'sk-clear-openai-2' } }, web: { search: { apiKey: '' } }, mqtt: { url: 'mqtt://127.0.0.1:1', fleet: { callers: [{ node: 'shed', key: 'shed-clear-key-3' }] } } };
  writeFileSync(file, JSON.stringify(clear, null, 2));
  const doctor = JSON.parse(runPinclaw(['doctor', '--json'], { env }).stdout) as { checks: { name: string; state: string; detail: string }[] };
  t.match(doctor.checks.find((c) => c.name === 'secrets'), { state: 'warn', detail: /in clear in .*: gateway\.token, providers\.openai\.apiKey, mqtt\.fleet\.callers\[0\]\.key;/ });
  t.notOk(existsSync(join(home, 'secret.key')), 'doctor changes nothing');

  const set = runPinclaw(['config', 'set', 'log.level', 'debug'], { env });
  t.equal(set.code, 0, set.stderr);
  t.match(set.stderr, /encrypted the secrets .* held in clear: gateway\.token, providers\.openai\.apiKey, mqtt\.fleet\.callers\[0\]\.key/);
  const text = readFileSync(file, 'utf8');
  for (const v of ['gw-clear-token-1', 'sk-clear-openai-2', 'shed-clear-key-3']) t.notMatch(text, v, `${v} is no longer in the file`);
  t.match(JSON.parse(text), { web: { search: { apiKey: '' } }, log: { level: 'debug' } }, 'an empty secret stays empty; the key set is there');
  const config = loadConfig(resolvePaths({ home }, {}), {});
  t.same([config.gateway.token, config.providers.openai.apiKey, config.mqtt.fleet.callers[0]!.key], ['gw-clear-token-1', 'sk-clear-openai-2', 'shed-clear-key-3'], 'the same values decrypt');
  const after = JSON.parse(runPinclaw(['doctor', '--json'], { env }).stdout) as { checks: { name: string; state: string; detail: string }[] };
  t.match(after.checks.find((c) => c.name === 'secrets'), { state: 'ok' });
});

t.test('onboarding writes the config with every secret it held in clear encrypted', async (t) => {
  const home = tempDir();
  const paths = resolvePaths({ home }, {});
  writeFileSync(paths.config, JSON.stringify({ gateway: { token: 'gw-onboard-clear-4' } }));
  const plan = planOnboard({ gateway: { token: 'gw-onboard-clear-4' } }, { board: 'auto', service: 'none', telegramToken: '999:onboard-tg-token-5' }, paths.secretKey, {});
  t.equal(applyOnboard(paths, plan), true);
  const text = readFileSync(paths.config, 'utf8');
  t.notMatch(text, /gw-onboard-clear-4|onboard-tg-token-5/);
  const config = loadConfig(paths, {});
  t.same([config.gateway.token, config.channels.telegram.token], ['gw-onboard-clear-4', '999:onboard-tg-token-5']);
});
