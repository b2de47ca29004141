// Secrets at rest in the config: AES-256-GCM under a 0600 key file; never plaintext on disk.
import t from 'tap';
import { chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { decryptSecret, encryptSecret, redact, secretKey } from '../src/config/secrets.js';
import { cleanEnv, runPinclaw, tempDir } from './support/proc.js';

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
