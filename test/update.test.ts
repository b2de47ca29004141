// `pinclaw update`: the signed self-update end to end, through the bundle, against releases this
// test signs (with Debian's minisign and with Node, each checked by the other) and serves from a
// real HTTP server on 127.0.0.1. The executables are small real ELF programs compiled here
// (test/support/update/release-stub.c; the wrong-architecture one with the arm64 cross compiler),
// and the service manager is a stand-in systemctl (test/support/update/systemctl.py) that starts
// them with a NOTIFY_SOCKET and reports READY=1 and WATCHDOG=1 as systemd's `show` does: this
// machine has no systemd as PID 1. Every fault must leave the installed executable as it was.
import t, { type Test } from 'tap';
import { execFile, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, chownSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { defaults } from '../src/config/index.js';
import { openDatabase } from '../src/store/db.js';
import { migrations } from '../src/store/schema.js';
import { getState } from '../src/store/state.js';
import { dailyUpdateCheck } from '../src/update/daily-check.js';
import { elfInfo } from '../src/update/elf.js';
import { SignatureError, parsePublicKey, verifyMinisign } from '../src/update/minisign.js';
import { compareVersions, parseSums, versionOfComment } from '../src/update/release-files.js';
import { nodeSigner, type NodeSigner } from './support/update/minisign-node.js';
import { bundle, cleanEnv, root, run, runPinclawAsync, start, tempDir, type RunResult } from './support/proc.js';

const support = join(root, 'test', 'support', 'update');
const SCHEMA = Math.max(...migrations.map((m) => m.version));
const EXE = `pinclaw-linux-${process.arch}`;
const haveMinisign = spawnSync('minisign', ['-v']).status === 0;
const haveCross = spawnSync('aarch64-linux-gnu-gcc', ['--version']).status === 0;
// CI installs both (.ci/run); elsewhere the tests that need them say why they are skipped.
const noMinisign = haveMinisign ? false : process.env.CI ? false : 'minisign is not installed (apt-get install minisign)';

// ---- the pieces ----------------------------------------------------------------------------

const stubs = tempDir('pinclaw-update-stubs-');
const MODES = { healthy: 0, 'version-fails': 1, 'never-ready': 2, 'no-watchdog': 3 } as const;

/** A release executable that says `version`, compiled once per variant. */
function stub(version: string, o: { mode?: keyof typeof MODES; schema?: number; arch?: 'native' | 'arm64' } = {}): string {
  const mode = o.mode ?? 'healthy';
  const schema = o.schema ?? SCHEMA;
  const file = join(stubs, `stub-${version}-${mode}-${schema}-${o.arch ?? 'native'}`);
  if (existsSync(file)) return file;
  const cc = o.arch === 'arm64' ? 'aarch64-linux-gnu-gcc' : 'gcc';
  const r = run(cc, ['-O1', '-o', file, `-DVERSION="${version}"`, `-DSCHEMA=${schema}`, `-DMODE=${MODES[mode]}`, join(support, 'release-stub.c')]);
  if (r.code !== 0) throw new Error(`${cc} failed: ${r.stderr}`);
  return file;
}

const sha256 = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

interface MinisignKeyPair {
  pub: string;
  key: string;
  publicKey: string;
}

function minisignKey(): MinisignKeyPair {
  const dir = tempDir('pinclaw-minisign-');
  const pub = join(dir, 'minisign.pub');
  const key = join(dir, 'minisign.key');
  const r = run('minisign', ['-G', '-W', '-p', pub, '-s', key]);
  if (r.code !== 0) throw new Error(`minisign -G failed: ${r.stderr}`);
  return { pub, key, publicKey: readFileSync(pub, 'utf8').split('\n')[1]! };
}

type Signer = { minisign: MinisignKeyPair } | { node: NodeSigner };

/** Writes SHA256SUMS.minisig for dir/SHA256SUMS. */
function signSums(dir: string, signer: Signer, comment: string): void {
  const sums = join(dir, 'SHA256SUMS');
  if ('minisign' in signer) {
    const r = run('minisign', ['-S', '-s', signer.minisign.key, '-m', sums, '-t', comment]);
    if (r.code !== 0) throw new Error(`minisign -S failed: ${r.stderr}`);
  } else {
    writeFileSync(`${sums}.minisig`, signer.node.sign(readFileSync(sums), comment));
  }
}

interface ReleaseSpec {
  version: string;
  binary: string;
  signer: Signer;
  /** SHA256SUMS as served, when it should not be the true one */
  sums?: (truth: string) => string;
  /** sign this text instead of the SHA256SUMS served (a signature that does not match it) */
  signOther?: boolean;
}

/** A release directory as update.url serves it. */
function makeRelease(spec: ReleaseSpec): string {
  const dir = tempDir('pinclaw-release-');
  copyFileSync(spec.binary, join(dir, EXE));
  const truth = `${sha256(spec.binary)}  ${EXE}\n`;
  const sums = join(dir, 'SHA256SUMS');
  if (spec.signOther) {
    writeFileSync(sums, `${'0'.repeat(64)}  ${EXE}\n`);
    signSums(dir, spec.signer, `version:${spec.version}`);
    writeFileSync(sums, truth);
  } else {
    writeFileSync(sums, spec.sums ? spec.sums(truth) : truth);
    signSums(dir, spec.signer, `timestamp:1764300000\tfile:SHA256SUMS\tversion:${spec.version}`);
  }
  return dir;
}

/** A real HTTP server: /<n>/<file> is a file of the n-th release directory; names in `truncate` are cut short. */
class ReleaseServer {
  dirs: string[] = [];
  truncate = new Set<string>();
  requests: string[] = [];
  private server!: Server;
  url = '';
  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      this.requests.push(req.url ?? '');
      const m = /^\/(\d+)\/([\w.-]+)$/.exec(req.url ?? '');
      const dir = m ? this.dirs[Number(m[1])] : undefined;
      const file = dir && join(dir, m![2]!);
      if (!file || !existsSync(file)) {
        res.writeHead(404).end('not found');
        return;
      }
      const body = readFileSync(file);
      res.writeHead(200, { 'content-length': body.length, 'content-type': 'application/octet-stream' });
      if (this.truncate.has(m![2]!)) {
        // Half the bytes, then the connection drops: a download cut short.
        res.write(body.subarray(0, body.length >> 1), () => res.socket?.destroy());
        return;
      }
      res.end(body);
    });
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }
  add(dir: string): string {
    this.dirs.push(dir);
    return `${this.url}/${this.dirs.length - 1}`;
  }
  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((r) => this.server.close(() => r()));
  }
}

const server = new ReleaseServer();
t.before(() => server.start());
t.teardown(() => server.close());

interface Install {
  dir: string;
  target: string;
  home: string;
  systemd: string;
  env: NodeJS.ProcessEnv;
  /** runs `pinclaw update ...` through the bundle */
  update(...args: string[]): Promise<RunResult>;
  systemctl(...args: string[]): RunResult;
  /** the stand-in manager's view of the unit */
  show(): Record<string, string>;
  outbound(): string[];
}

/** An installed `current` executable, a home whose config trusts `keys` and points at `url`. */
function install(t: Test, o: { current: string; url: string; keys: string[]; service: boolean; healthSeconds?: number; extraEnv?: Record<string, string>; execLink?: boolean }): Install {
  const dir = tempDir('pinclaw-install-');
  const target = join(dir, 'pinclaw');
  copyFileSync(o.current, target);
  chmodSync(target, 0o755);
  const home = tempDir('pinclaw-home-');
  const config = { update: { url: o.url, publicKeys: o.keys, healthSeconds: o.healthSeconds ?? 20 }, channels: { telegram: { token: '123:test' } }, owner: { notify: 'telegram:42' } };
  writeFileSync(join(home, 'config.json'), JSON.stringify(config, null, 2));
  const systemd = tempDir('pinclaw-systemd-');
  const bin = join(systemd, 'bin');
  mkdirSync(bin);
  if (o.service) {
    symlinkSync(join(support, 'systemctl.py'), join(bin, 'systemctl'));
    // execLink: the unit starts a symbolic link to the executable (/usr/local/bin/pinclaw -> /opt/...).
    const exec = o.execLink ? join(systemd, 'pinclaw-link') : target;
    if (o.execLink) symlinkSync(target, exec);
    writeFileSync(join(systemd, 'unit.json'), JSON.stringify({ exec: [exec, 'gateway'], watchdogUsec: 400_000 }));
  } else {
    // What systemctl says in a container without systemd.
    writeFileSync(join(bin, 'systemctl'), '#!/bin/sh\necho "System has not been booted with systemd as init system (PID 1). Can\'t operate." >&2\nexit 1\n', { mode: 0o755 });
  }
  const env = cleanEnv({ PINCLAW_HOME: home, PINCLAW_UPDATE_TARGET: target, FAKE_SYSTEMD_DIR: systemd, PATH: `${bin}:/usr/local/bin:/usr/bin:/bin`, ...o.extraEnv });
  const i: Install = {
    dir,
    target,
    home,
    systemd,
    env,
    update: (...args) => runPinclawAsync(['update', ...args], { env }),
    systemctl: (...args) => run(join(bin, 'systemctl'), args, { env }),
    show: () => Object.fromEntries(i.systemctl('show', 'pinclaw.service', '--property=ActiveState,SubState,MainPID,InvocationID').stdout.trim().split('\n').map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)])),
    outbound: () => {
      if (!existsSync(join(home, 'pinclaw.db'))) return [];
      const db = openDatabase(join(home, 'pinclaw.db'));
      try {
        return (db.prepare(`select text from outbound where channel = 'telegram' and chat_id = '42' order by id`).all() as { text: string }[]).map((r) => r.text);
      } finally {
        db.close();
      }
    },
  };
  if (o.service) {
    t.teardown(() => void i.systemctl('stop', 'pinclaw.service'));
    t.equal(i.systemctl('restart', 'pinclaw.service').code, 0, 'the stand-in service runs the installed version');
  }
  return i;
}

/** The install directory holds exactly these names (no download or link left behind). */
function filesIn(dir: string): string[] {
  return readdirSync(dir).sort();
}

/** Waits (polling the stand-in manager) until the unit runs a healthy process. */
async function untilRunning(i: Install): Promise<Record<string, string>> {
  for (let n = 0; n < 200; n++) {
    const s = i.show();
    if (s.ActiveState === 'active' && s.MainPID !== '0') return s;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`the stand-in unit never became active: ${JSON.stringify(i.show())}`);
}

/** What the running process of the unit is: its /proc/PID/exe bytes' hash. */
function runningHash(i: Install): string {
  const pid = i.show().MainPID!;
  return createHash('sha256').update(readFileSync(`/proc/${pid}/exe`)).digest('hex');
}

/** The SignatureError `f` throws (a failure when it throws nothing else). */
function faultOf(f: () => unknown): { fault: string; message: string } | string {
  try {
    f();
    return 'no error';
  } catch (err) {
    return err instanceof SignatureError ? { fault: err.fault, message: err.message } : String(err);
  }
}

// ---- minisign, both ways ----------------------------------------------------------------------

t.test('a signature made by minisign -S is verified by pinclaw (node:crypto), the trusted comment with it', { skip: noMinisign }, async (t) => {
  const key = minisignKey();
  const dir = tempDir();
  const file = join(dir, 'SHA256SUMS');
  writeFileSync(file, `${'a'.repeat(64)}  ${EXE}\n`);
  signSums(dir, { minisign: key }, 'version:2.0.0');
  const pub = parsePublicKey(readFileSync(key.pub, 'utf8'));
  const v = verifyMinisign(readFileSync(file), readFileSync(`${file}.minisig`, 'utf8'), [pub]);
  t.equal(v.trustedComment, 'version:2.0.0');
  // minisign prints the id as a hex number (no leading zeros); pinclaw always shows 16 digits.
  const printed = /minisign public key ([0-9A-F]+)/.exec(readFileSync(key.pub, 'utf8'))?.[1] ?? 'none';
  t.equal(v.keyId, printed.padStart(16, '0'), 'the key id minisign prints');
  // One changed byte of the file, or of the trusted comment, and the check fails.
  t.match(faultOf(() => verifyMinisign(Buffer.from(readFileSync(file, 'utf8').replace('a', 'b')), readFileSync(`${file}.minisig`, 'utf8'), [pub])), { fault: 'bad-signature', message: /the signature does not match the file/ });
  const sig = readFileSync(`${file}.minisig`, 'utf8').replace('version:2.0.0', 'version:9.0.0');
  t.match(faultOf(() => verifyMinisign(readFileSync(file), sig, [pub])), { fault: 'bad-signature', message: /trusted comment/ });
  t.match(faultOf(() => verifyMinisign(readFileSync(file), readFileSync(`${file}.minisig`, 'utf8'), [parsePublicKey(nodeSigner().publicKey)])), { fault: 'unknown-key' });
});

t.test('a signature pinclaw\'s test signer makes in Node is accepted by minisign -V, and a changed file is not', { skip: noMinisign }, async (t) => {
  const signer = nodeSigner();
  const dir = tempDir();
  const file = join(dir, 'SHA256SUMS');
  writeFileSync(file, `${'c'.repeat(64)}  ${EXE}\n`);
  writeFileSync(`${file}.minisig`, signer.sign(readFileSync(file), 'version:3.1.4'));
  writeFileSync(join(dir, 'node.pub'), signer.publicKeyFile);
  const ok = run('minisign', ['-V', '-p', join(dir, 'node.pub'), '-m', file]);
  t.equal(ok.code, 0, `minisign -V accepts it: ${ok.stderr}`);
  t.match(ok.stdout, /Trusted comment: version:3\.1\.4/);
  t.equal(run('minisign', ['-Vm', file, '-P', signer.publicKey]).code, 0, 'also given as -P RW...');
  t.same(verifyMinisign(readFileSync(file), readFileSync(`${file}.minisig`, 'utf8'), [parsePublicKey(signer.publicKey)]).trustedComment, 'version:3.1.4');
  writeFileSync(file, `${'d'.repeat(64)}  ${EXE}\n`);
  t.not(run('minisign', ['-V', '-p', join(dir, 'node.pub'), '-m', file]).code, 0, 'minisign -V refuses the changed file');
});

t.test('release files: SHA256SUMS lines, the version of a trusted comment, version order, ELF machines', async (t) => {
  t.same([...parseSums(`${'A'.repeat(64)}  pinclaw-linux-x64\n${'b'.repeat(64)} *pinclaw-linux-arm64\n`)], [['pinclaw-linux-x64', 'a'.repeat(64)], ['pinclaw-linux-arm64', 'b'.repeat(64)]]);
  t.throws(() => parseSums('abc  x\n'), /SHA256SUMS line 1 is not/);
  t.equal(versionOfComment('timestamp:1\tfile:SHA256SUMS\tversion:1.4.0'), '1.4.0');
  t.equal(versionOfComment('timestamp:1'), undefined);
  t.ok(compareVersions('1.10.0', '1.9.9') > 0);
  t.ok(compareVersions('1.2.0-rc.1', '1.2.0') < 0);
  t.equal(compareVersions('1.2.0', '1.2.0'), 0);
  t.equal(elfInfo(stub('1.0.0')).arch, process.arch);
  if (haveCross) t.equal(elfInfo(stub('1.0.0', { arch: 'arm64' })).arch, 'arm64');
  t.throws(() => elfInfo(join(support, 'release-stub.c')), /not an ELF executable/);
});

t.test('--version --json says the version and the schema a new executable migrates to', async (t) => {
  const r = run(process.execPath, [join(root, 'dist', 'pinclaw.cjs'), '--json', '--version']);
  const j = JSON.parse(r.stdout) as { version: string; schema: number };
  t.match(j, { version: /^\d+\.\d+\.\d+/, schema: SCHEMA });
});

// ---- pinclaw update under the (stand-in) service manager ----------------------------------

t.test('update under systemd: download, checks, swap, restart; healthy: the new version runs, the old one is pinclaw.prev, the owner is told', { skip: noMinisign }, async (t) => {
  const key = minisignKey();
  const url = server.add(makeRelease({ version: '1.1.0', binary: stub('1.1.0'), signer: { minisign: key } }));
  const i = install(t, { current: stub('1.0.0'), url, keys: [key.publicKey], service: true });
  const before = (await untilRunning(i)).MainPID;
  // The home's database exists at the schema the new version has: no backup needed.
  openDatabase(join(i.home, 'pinclaw.db')).close();

  const check = await i.update('--check');
  t.equal(check.code, 0, check.stderr);
  t.match(check.stdout, /pinclaw 1\.1\.0 is available \(this is 1\.0\.0; signed by key [0-9A-F]{16}\)/);
  t.equal(sha256(i.target), sha256(stub('1.0.0')), '--check changes nothing');

  const r = await i.update();
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, /updated 1\.0\.0 to 1\.1\.0: the gateway is healthy \(READY=1 and WATCHDOG=1\)/);
  t.equal(sha256(i.target), sha256(stub('1.1.0')), 'the new executable is in place');
  t.equal(statSync(i.target).mode & 0o7777, 0o755, 'with the mode the installed one had (the download is 0700 until checked)');
  t.equal(sha256(`${i.target}.prev`), sha256(stub('1.0.0')), 'the old one is kept as pinclaw.prev');
  t.same(filesIn(i.dir), ['pinclaw', 'pinclaw.prev'], 'no download, link or journal left behind');
  const now = i.show();
  t.not(now.MainPID, before, 'restarted');
  t.equal(runningHash(i), sha256(stub('1.1.0')), 'the service runs the new executable');
  t.same(i.outbound(), ['pinclaw updated from 1.0.0 to 1.1.0']);
  t.notOk(existsSync(join(i.home, 'backups')), 'the schema does not change: no backup');

  const again = await i.update();
  t.equal(again.code, 0);
  t.match(again.stdout, /pinclaw 1\.1\.0 is the release at .*: nothing to do/);
});

t.test('a new schema: the home is backed up before the swap', { skip: noMinisign }, async (t) => {
  const signer = nodeSigner();
  const url = server.add(makeRelease({ version: '1.1.0', binary: stub('1.1.0', { schema: SCHEMA + 1 }), signer: { node: signer } }));
  const i = install(t, { current: stub('1.0.0'), url, keys: [signer.publicKey], service: true, execLink: true });
  openDatabase(join(i.home, 'pinclaw.db')).close();
  const r = await i.update();
  t.match(r.stdout, /restarting pinclaw\.service .* with 1\.1\.0/, 'the unit that starts a link to the executable is found');
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, new RegExp(`the database schema changes \\(${SCHEMA} to ${SCHEMA + 1}\\): backing up the home to .*before-update-1\\.0\\.0-to-1\\.1\\.0-`));
  const backups = readdirSync(join(i.home, 'backups'));
  t.equal(backups.length, 1);
  const list = run('tar', ['-tzf', join(i.home, 'backups', backups[0]!)]);
  t.match(list.stdout, /manifest\.json/, 'a real backup archive');
  t.match(list.stdout, /pinclaw\.db/);
});

/** A fault: the update fails with `message`, the installed executable and the service are as they were. */
async function refused(t: Test, i: Install, message: RegExp, args: string[] = []): Promise<RunResult> {
  const running = i.show().MainPID;
  const before = sha256(i.target);
  const files = filesIn(i.dir);
  const r = await i.update(...args);
  t.equal(r.code, 1, `exit 1: ${r.stderr}`);
  t.match(r.stderr, message);
  t.equal(sha256(i.target), before, 'the installed executable is unchanged');
  t.same(filesIn(i.dir), files, 'nothing added to the install directory (no pinclaw.prev, no partial download)');
  t.equal(i.show().MainPID, running, 'the service was not restarted');
  return r;
}

t.test('faults before the swap: each is refused naming its cause, nothing changes', { skip: noMinisign }, async (t) => {
  const key = minisignKey();
  const other = minisignKey();
  const current = stub('1.0.0');
  const good = stub('1.1.0');
  const cases: { name: string; release: () => string; message: RegExp; told: RegExp | null; args?: string[]; setup?: () => void }[] = [
    {
      name: 'a truncated download',
      release: () => makeRelease({ version: '1.1.0', binary: good, signer: { minisign: key } }),
      setup: () => server.truncate.add(EXE),
      message: /the download of http:\/\/127\.0\.0\.1:\d+\/\d+\/pinclaw-linux-\w+ (broke off after \d+ bytes: .*|ended after \d+ of \d+ bytes); nothing was changed/,
      told: null,
    },
    {
      name: 'a wrong checksum',
      release: () => makeRelease({ version: '1.1.0', binary: good, signer: { minisign: key }, sums: (s) => s.replace(/^./, (c) => (c === '0' ? '1' : '0')) }),
      message: /does not match SHA256SUMS \(got [0-9a-f]{64}, signed [0-9a-f]{64}\): it was damaged or cut short on the way; nothing was changed/,
      told: /does not match SHA256SUMS/,
    },
    {
      name: 'a valid checksum with a bad signature',
      release: () => makeRelease({ version: '1.1.0', binary: good, signer: { minisign: key }, signOther: true }),
      message: /the release at .* is refused: SHA256SUMS\.minisig: the signature does not match the file \(key [0-9A-F]{16}\)/,
      told: /the signature does not match the file/,
    },
    {
      name: 'an unknown key',
      release: () => makeRelease({ version: '1.1.0', binary: good, signer: { minisign: other } }),
      message: /the signature was made by key [0-9A-F]{16}, which is not trusted here \(trusted: [0-9A-F]{16}\); add its public key to update\.publicKeys/,
      told: /not trusted here/,
    },
    {
      name: 'a downgrade',
      release: () => makeRelease({ version: '0.9.0', binary: stub('0.9.0'), signer: { minisign: key } }),
      message: /is 0\.9\.0, older than this pinclaw 1\.0\.0: a downgrade needs --allow-downgrade/,
      told: null,
    },
    {
      name: '--to another version than the release holds',
      release: () => makeRelease({ version: '1.1.0', binary: good, signer: { minisign: key } }),
      args: ['--to', '1.2.0'],
      message: /update\.url holds 1\.1\.0, not 1\.2\.0/,
      told: null,
    },
    {
      name: 'a binary that exits 1',
      release: () => makeRelease({ version: '1.1.0', binary: stub('1.1.0', { mode: 'version-fails' }), signer: { minisign: key } }),
      message: /pinclaw-linux-\w+ 1\.1\.0 is refused: `.*--version` exited with 1: error: this build cannot start; nothing was changed/,
      told: /exited with 1/,
    },
    {
      name: 'a binary that says another version than it is signed as',
      release: () => makeRelease({ version: '1.1.0', binary: stub('1.2.0'), signer: { minisign: key } }),
      message: /says it is 1\.2\.0, but the release is signed as 1\.1\.0/,
      told: /says it is 1\.2\.0/,
    },
    ...(haveCross || process.env.CI
      ? [{
          name: 'another architecture',
          release: () => makeRelease({ version: '1.1.0', binary: stub('1.1.0', { arch: 'arm64' }), signer: { minisign: key } }),
          message: new RegExp(`is built for arm64, but this machine is ${process.arch}: the release is wrong; nothing was changed`),
          told: /built for arm64/,
        }]
      : []),
  ];
  for (const c of cases) {
    await t.test(c.name, async (t) => {
      const url = server.add(c.release());
      const i = install(t, { current, url, keys: [key.publicKey], service: true });
      await untilRunning(i);
      c.setup?.();
      t.teardown(() => server.truncate.clear());
      await refused(t, i, c.message, c.args);
      const told = i.outbound();
      if (c.told) t.match(told, [c.told], 'the owner is told the cause');
      else t.same(told, [], 'not the owner\'s business: the command line says it');
    });
  }
});

t.test('a new version that never sends READY=1 is rolled back: the old one runs again and the owner is told', { skip: noMinisign }, async (t) => {
  const key = minisignKey();
  const url = server.add(makeRelease({ version: '1.1.0', binary: stub('1.1.0', { mode: 'never-ready' }), signer: { minisign: key } }));
  const i = install(t, { current: stub('1.0.0'), url, keys: [key.publicKey], service: true, healthSeconds: 5 });
  await untilRunning(i);
  const r = await i.update();
  t.equal(r.code, 1, r.stderr);
  t.match(r.stdout, /the new gateway did not send READY=1 \(the unit is activating\/start\) within 5 s \(update\.healthSeconds\): rolling back to 1\.0\.0/);
  t.match(r.stderr, /the update to 1\.1\.0 was rolled back: the new gateway did not send READY=1 .* 1\.0\.0 runs again/);
  t.equal(sha256(i.target), sha256(stub('1.0.0')), 'the old executable is back in place');
  t.same(filesIn(i.dir), ['pinclaw'], 'no journal left; the failed one is gone');
  await untilRunning(i);
  t.equal(runningHash(i), sha256(stub('1.0.0')), 'the service runs the old executable again');
  t.match(i.outbound(), [/^pinclaw update: the update to 1\.1\.0 was rolled back: the new gateway did not send READY=1/]);
});

t.test('a new version that sends READY=1 but no WATCHDOG=1 is rolled back too', { skip: noMinisign }, async (t) => {
  const signer = nodeSigner();
  const url = server.add(makeRelease({ version: '1.1.0', binary: stub('1.1.0', { mode: 'no-watchdog' }), signer: { node: signer } }));
  const i = install(t, { current: stub('1.0.0'), url, keys: [signer.publicKey], service: true, healthSeconds: 5 });
  await untilRunning(i);
  const r = await i.update();
  t.equal(r.code, 1, r.stderr);
  t.match(r.stderr, /rolled back: the new gateway sent READY=1 but no WATCHDOG=1 \(its health check never passed\) within 5 s/);
  t.equal(sha256(i.target), sha256(stub('1.0.0')));
});

t.test('SIGKILL between the rename and the restart: the executable is whole, and the next pinclaw update finishes the job', { skip: noMinisign }, async (t) => {
  const key = minisignKey();
  const url = server.add(makeRelease({ version: '1.1.0', binary: stub('1.1.0'), signer: { minisign: key } }));
  const i = install(t, { current: stub('1.0.0'), url, keys: [key.publicKey], service: true });
  const before = (await untilRunning(i)).MainPID;
  const killed = await runPinclawAsync(['update'], { env: { ...i.env, PINCLAW_TEST_UPDATE_CRASH: 'after-rename' } });
  t.equal(killed.signal, 'SIGKILL', 'killed at the step');
  t.equal(sha256(i.target), sha256(stub('1.1.0')), 'the target is the whole new executable (rename is atomic)');
  t.equal(sha256(`${i.target}.prev`), sha256(stub('1.0.0')), 'the old one is kept');
  t.same(filesIn(i.dir), ['.pinclaw.update.json', 'pinclaw', 'pinclaw.prev'], 'the journal says an update is unfinished');
  t.equal(i.show().MainPID, before, 'not restarted yet: the old process still runs');
  const check = await i.update('--check');
  t.match(check.stdout, /note: a previous update \(1\.0\.0 to 1\.1\.0\) stopped after the swap: run pinclaw update to finish it/);
  t.ok(existsSync(join(i.dir, '.pinclaw.update.json')), '--check leaves the journal alone');
  t.equal(i.show().MainPID, before, '--check restarts nothing');

  const r = await i.update();
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, /a previous update \(1\.0\.0 to 1\.1\.0\) stopped after the swap; finishing it/);
  t.match(r.stdout, /updated 1\.0\.0 to 1\.1\.0: the gateway is healthy/);
  t.same(filesIn(i.dir), ['pinclaw', 'pinclaw.prev']);
  t.equal(runningHash(i), sha256(stub('1.1.0')));
});

t.test('SIGKILL after the download: nothing is swapped, and the next update removes the partial file', { skip: noMinisign }, async (t) => {
  const signer = nodeSigner();
  const url = server.add(makeRelease({ version: '1.1.0', binary: stub('1.1.0'), signer: { node: signer } }));
  const i = install(t, { current: stub('1.0.0'), url, keys: [signer.publicKey], service: false });
  const killed = await runPinclawAsync(['update', '--yes'], { env: { ...i.env, PINCLAW_TEST_UPDATE_CRASH: 'after-download' } });
  t.equal(killed.signal, 'SIGKILL');
  t.equal(sha256(i.target), sha256(stub('1.0.0')), 'the installed executable is untouched');
  const left = filesIn(i.dir).filter((f) => f !== 'pinclaw');
  t.match(left, [/^\.pinclaw\.download-\d+$/], 'the killed download is left behind');
  const r = await i.update('--yes');
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, new RegExp(`removed ${left[0]!.replace(/\./g, '\\.')}, the download of an update that was stopped`));
  t.same(filesIn(i.dir), ['pinclaw', 'pinclaw.prev']);
  t.equal(sha256(i.target), sha256(stub('1.1.0')));
});

// ---- outside systemd, and an install directory this user cannot write ---------------------------

t.test('outside systemd: refused without --yes; with --yes swapped, the next start runs the new version', { skip: noMinisign }, async (t) => {
  const signer = nodeSigner();
  const url = server.add(makeRelease({ version: '1.1.0', binary: stub('1.1.0'), signer: { node: signer } }));
  const i = install(t, { current: stub('1.0.0'), url, keys: [signer.publicKey], service: false });
  const no = await i.update();
  t.equal(no.code, 1);
  t.match(no.stderr, /no systemd service runs .*pinclaw, so pinclaw update cannot restart and watch it: run `pinclaw update --yes`/);
  t.equal(sha256(i.target), sha256(stub('1.0.0')));
  const yes = await i.update('--yes');
  t.equal(yes.code, 0, yes.stderr);
  t.match(yes.stdout, /pinclaw 1\.1\.0 is in place at .*pinclaw \(1\.0\.0 kept as .*pinclaw\.prev\): the next start of the gateway runs 1\.1\.0/);
  t.equal(sha256(i.target), sha256(stub('1.1.0')));
  t.same(filesIn(i.dir), ['pinclaw', 'pinclaw.prev']);

  // A downgrade, when asked for.
  const back = server.add(makeRelease({ version: '1.0.0', binary: stub('1.0.0'), signer: { node: signer } }));
  const i2 = install(t, { current: stub('1.1.0'), url: back, keys: [signer.publicKey], service: false });
  const down = await i2.update('--yes', '--allow-downgrade', '--to', '1.0.0');
  t.equal(down.code, 0, down.stderr);
  t.equal(sha256(i2.target), sha256(stub('1.0.0')));
});

t.test('an install directory this user cannot write is refused with the fix, before anything is downloaded', { skip: (process.getuid?.() !== 0 && 'needs root to run pinclaw as nobody') || (spawnSync('setpriv', ['--version']).status !== 0 && 'setpriv is not installed') }, async (t) => {
  const signer = nodeSigner();
  const url = server.add(makeRelease({ version: '1.1.0', binary: stub('1.1.0'), signer: { node: signer } }));
  const i = install(t, { current: stub('1.0.0'), url, keys: [signer.publicKey], service: false });
  chownSync(i.home, 65534, 65534);
  chmodSync(i.dir, 0o755);
  chmodSync(stubs, 0o755);
  const before = server.requests.length;
  // Not spawnSync: this process serves the release.
  const r = await new Promise<RunResult>((resolve) => {
    execFile('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, join(root, 'dist', 'pinclaw.cjs'), 'update', '--yes'], { env: i.env, encoding: 'utf8', timeout: 60_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : null) : 0, signal: err?.signal ?? null, stdout, stderr }));
  });
  t.equal(r.code, 1, r.stderr);
  t.match(r.stderr, /cannot update .*pinclaw: its directory .* is not writable by this user \(EACCES\); nothing was changed\. run `sudo pinclaw update`/);
  t.equal(sha256(i.target), sha256(stub('1.0.0')));
  t.same(filesIn(i.dir), ['pinclaw']);
  t.ok(server.requests.slice(before).every((p) => !p.endsWith(EXE)), 'the executable was not downloaded');
});

t.test('update.url unset, or no key to trust: a configuration error naming the key', async (t) => {
  const i = install(t, { current: stub('1.0.0'), url: 'http://127.0.0.1:9/x', keys: [], service: false });
  const nokey = await i.update('--check');
  t.equal(nokey.code, 78);
  t.match(nokey.stderr, /no key to check a release with: this pinclaw has no release key built in .* add the public key .* to update\.publicKeys/);
  writeFileSync(join(i.home, 'config.json'), JSON.stringify({ update: { publicKeys: ['RWQnotakey'] } }));
  const bad = await i.update('--check');
  t.equal(bad.code, 78);
  t.match(bad.stderr, /update\.url is not set/);
  writeFileSync(join(i.home, 'config.json'), JSON.stringify({ update: { url: 'ftp://x/y', publicKeys: [nodeSigner().publicKey] } }));
  t.match((await i.update('--check')).stderr, /update\.url "ftp:\/\/x\/y" must be http:\/\/ or https:\/\//);
  writeFileSync(join(i.home, 'config.json'), JSON.stringify({ update: { url: 'http://127.0.0.1:9/x', publicKeys: ['RWQnotakey'] } }));
  t.match((await i.update('--check')).stderr, /update\.publicKeys\[0\]: the public key (is not base64|holds \d+ bytes, not 42)/);
});

t.test('a release location that answers 404: a clear error, exit 1, nothing changed', async (t) => {
  const signer = nodeSigner();
  const i = install(t, { current: stub('1.0.0'), url: `${server.url}/nothing-here`, keys: [signer.publicKey], service: false });
  const r = await i.update('--yes');
  t.equal(r.code, 1);
  t.match(r.stderr, /^pinclaw: cannot fetch http:\/\/127\.0\.0\.1:\d+\/nothing-here\/SHA256SUMS(\.minisig)?: the server answered 404 Not Found; nothing was changed\n$/);
  t.same(filesIn(i.dir), ['pinclaw']);
  t.same(i.outbound(), [], 'a network error is not sent to the owner\'s chat');
});

t.test('config set and validate refuse what update would refuse later', async (t) => {
  const home = tempDir();
  const env = cleanEnv({ PINCLAW_HOME: home });
  const set = (key: string, value: string) => runPinclawAsync(['config', 'set', key, value], { env });
  const ftp = await set('update.url', 'ftp://example.org/r');
  t.equal(ftp.code, 78);
  t.match(ftp.stderr, /update\.url "ftp:\/\/example\.org\/r" must be http:\/\/ or https:\/\//);
  const daily = await set('update.check', 'daily');
  t.equal(daily.code, 78);
  t.match(daily.stderr, /update\.check is daily but update\.url is not set/);
  const key = await set('update.publicKeys', '["RWQ"]');
  t.equal(key.code, 78);
  t.match(key.stderr, /update\.publicKeys\[0\]: the public key/);
  t.notOk(existsSync(join(home, 'config.json')), 'nothing was written');
  t.equal((await set('update.url', 'https://example.org/pinclaw/latest')).code, 0);
  t.equal((await set('update.check', 'daily')).code, 0);
});

// ---- the daily check ------------------------------------------------------------------------

t.test('the daily check tells the owner once about a newer release, and about one it refuses; it installs nothing', async (t) => {
  const signer = nodeSigner();
  const newer = server.add(makeRelease({ version: '1.1.0', binary: stub('1.1.0'), signer: { node: signer } }));
  const forged = server.add(makeRelease({ version: '1.2.0', binary: stub('1.2.0'), signer: { node: signer }, signOther: true }));
  const db = openDatabase(join(tempDir(), 'pinclaw.db'));
  t.teardown(() => db.close());
  const config = defaults();
  config.update.publicKeys = [signer.publicKey];
  config.update.url = newer;
  const told: string[] = [];
  const check = () => dailyUpdateCheck({ config, db, currentVersion: '1.0.0', tell: (text) => told.push(text) });
  t.match(await check(), /^pinclaw 1\.1\.0 is available \(this is 1\.0\.0\): run `sudo pinclaw update` on the board to install it$/);
  t.equal(await check(), undefined, 'the same news is not sent again the next day');
  t.equal(told.length, 1);
  config.update.url = forged;
  t.match(await check(), /daily update check: the release at .* is refused: SHA256SUMS\.minisig: the signature does not match the file .* Nothing was installed; this pinclaw \(1\.0\.0\) goes on/);
  t.equal(told.length, 2);
  t.match(getState(db, 'update.last_notice'), /refused/);
  // A port nothing listens on any more: a network error.
  const closed = createServer();
  await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
  const port = (closed.address() as AddressInfo).port;
  await new Promise((r) => closed.close(r));
  config.update.url = `http://127.0.0.1:${port}/nothing-listens`;
  t.equal(await check(), undefined, 'a network error is logged, not sent to the owner');
  t.equal(told.length, 2);
});

t.test('a gateway with update.check daily runs the check and tells the owner (here: the log, no owner.notify); it downloads no executable', async (t) => {
  const signer = nodeSigner();
  const url = server.add(makeRelease({ version: '99.0.0', binary: stub('99.0.0'), signer: { node: signer } }));
  const home = tempDir();
  writeFileSync(join(home, 'config.json'), JSON.stringify({ update: { check: 'daily', url, publicKeys: [signer.publicKey] } }));
  const before = server.requests.length;
  const gw = start(process.execPath, [bundle, 'gateway', '--port', '0'], { env: cleanEnv({ PINCLAW_HOME: home, PINCLAW_TEST_UPDATE_CHECK_MS: '200' }) });
  t.teardown(() => gw.child.kill('SIGKILL'));
  await gw.waitFor(/pinclaw 99\.0\.0 is available \(this is \d+\.\d+\.\d+\): run `sudo pinclaw update` on the board to install it/);
  const asked = server.requests.slice(before).map((p) => p.replace(/^\/\d+\//, ''));
  t.same(asked.sort(), ['SHA256SUMS', 'SHA256SUMS.minisig'], 'only the signed checksums were fetched');
  gw.child.kill('SIGTERM');
  t.equal((await gw.exited).code, 0);
});
