// `pinclaw skills` as a real process on a real home: installs from a directory, a .tar.gz (system
// tar) and a .zip (system zip), and from an https URL served on 127.0.0.1 (a self-signed cert the
// child trusts through NODE_EXTRA_CA_CERTS: the same TLS checks as any download, no test-only path);
// hostile archives built with python3 (`..`, absolute paths, links, 100 MB of zeros) refused with
// workspace/skills left exactly as it was; disabled by default, enable shows the tools, the prompt
// lists enabled skills only, remove.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { buildSystemPrompt, readSkills } from '../src/agent/prompt.js';
import { runSkills } from '../src/cli/skills-command.js';
import { resolvePaths } from '../src/paths.js';
import { cleanEnv, moduleRecorder, runPinclawAsync, tempDir } from './support/proc.js';

const runtime = { version: '9.9.9', node: 'v24', arch: 'arm64', model: 'anthropic/x', channel: 'cli' };

function home(extra: Record<string, string> = {}) {
  const h = tempDir();
  return { home: h, ws: join(h, 'workspace'), env: cleanEnv({ PINCLAW_HOME: h, ...extra }) };
}

/** A skill directory `name` under a new temp dir; returns the temp dir. */
function skillDir(name = 'weather', frontMatter = `name: ${name}\ndescription: reads the BME280 and explains it\ntools: [sensor_read, gpio_write]`): string {
  const base = tempDir();
  mkdirSync(join(base, name, 'scripts'), { recursive: true });
  writeFileSync(join(base, name, 'SKILL.md'), `---\n${frontMatter}\n---\n# Weather\nThe long body the prompt must not hold.\n`);
  writeFileSync(join(base, name, 'scripts', 'read.sh'), '#!/bin/sh\necho 21.5\n');
  chmodSync(join(base, name, 'scripts', 'read.sh'), 0o755);
  writeFileSync(join(base, name, 'notes.txt'), 'calibration notes\n');
  return base;
}

/** Every path under a directory with its size: "unchanged" means this is equal before and after. */
function snapshot(dir: string): string[] {
  if (!existsSync(dir)) return ['(absent)'];
  const out: string[] = [];
  const walk = (d: string, rel: string) => {
    for (const n of readdirSync(d).sort()) {
      const st = statSync(join(d, n));
      out.push(`${rel}${n}${st.isDirectory() ? '/' : ` ${st.size}`}`);
      if (st.isDirectory()) walk(join(d, n), `${rel}${n}/`);
    }
  };
  walk(dir, '');
  return out;
}

const py = (script: string, ...args: string[]) => execFileSync('python3', ['-c', script, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });

t.test('from a directory: listed with sizes and scripts, installed disabled; enable shows the tools; the prompt lists enabled skills only; remove', async (t) => {
  const h = home();
  const src = join(skillDir(), 'weather');
  const r = await runPinclawAsync(['skills', 'install', src, '--yes'], { env: h.env });
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, /skill weather: reads the BME280 and explains it/);
  t.match(r.stdout, /asks for the tools: sensor_read, gpio_write/);
  t.match(r.stdout, /3 files, .*; 1 script:/);
  t.match(r.stdout, /\n\s+20 B {2}scripts\/read\.sh {2}\[script, executable\]/);
  t.match(r.stdout, /\n\s+18 B {2}notes\.txt\n/);
  t.match(r.stdout, /disabled \(pinclaw skills enable weather turns it on\)/);
  const dir = join(h.ws, 'skills', 'weather');
  t.equal(readFileSync(join(dir, 'scripts', 'read.sh'), 'utf8'), '#!/bin/sh\necho 21.5\n');
  t.equal(statSync(join(dir, 'scripts', 'read.sh')).mode & 0o777, 0o755, 'the executable bit kept');
  t.equal(statSync(join(dir, 'notes.txt')).mode & 0o777, 0o644);

  t.same(readSkills(h.ws), [], 'a disabled skill is not in the prompt');
  t.notMatch(buildSystemPrompt({ workspace: h.ws, now: new Date(), runtime }), /weather/);
  // Which of Node's modules the listing loaded: node:https (with node:tls) only for a skill from a URL.
  const recorder = moduleRecorder(h.home);
  const list = await runPinclawAsync(['skills', 'list', '--json'], { env: { ...h.env, NODE_OPTIONS: recorder.nodeOptions } });
  t.same(JSON.parse(list.stdout), [{ name: 'weather', enabled: false, description: 'reads the BME280 and explains it', tools: ['sensor_read', 'gpio_write'] }]);
  const modules = recorder.loaded();
  t.ok(modules.includes('NativeModule fs'), 'the list is the listing process\'s');
  t.same(modules.filter((m) => /^NativeModule (https|tls)$/.test(m)), [], 'listing loads neither node:https nor node:tls');

  const noTty = await runPinclawAsync(['skills', 'enable', 'weather'], { env: h.env });
  t.equal(noTty.code, 1, 'without a terminal and without --yes nothing is enabled');
  t.match(noTty.stdout, /asks for the tools: sensor_read, gpio_write/, 'the tools are shown before the question');
  t.match(noTty.stderr, /needs your confirmation.*--yes/);
  t.same(readSkills(h.ws), []);

  const on = await runPinclawAsync(['skills', 'enable', 'weather', '--yes'], { env: h.env });
  t.equal(on.code, 0, on.stderr);
  t.match(on.stdout, /asks for the tools: sensor_read, gpio_write\nenabled weather/);
  const prompt = buildSystemPrompt({ workspace: h.ws, now: new Date(), runtime });
  t.match(prompt, /- weather: reads the BME280 and explains it \(.*skills\/weather\/SKILL\.md\)/, 'the one-line summary; the body is read on demand');
  t.notMatch(prompt, /long body the prompt must not hold/);

  const off = await runPinclawAsync(['skills', 'disable', 'weather'], { env: h.env });
  t.equal(off.stdout, 'disabled weather\n');
  t.same(readSkills(h.ws), []);

  const again = await runPinclawAsync(['skills', 'install', src, '--yes'], { env: h.env });
  t.equal(again.code, 1);
  t.match(again.stderr, /a skill named weather is installed already .*add --force/);

  const keep = await runPinclawAsync(['skills', 'remove', 'weather'], { env: h.env });
  t.equal(keep.code, 1, 'remove asks first');
  t.ok(existsSync(dir));
  const rm = await runPinclawAsync(['skills', 'remove', 'weather', '--yes'], { env: h.env });
  t.equal(rm.code, 0, rm.stderr);
  t.same(snapshot(join(h.ws, 'skills')), [], 'nothing left, not even a temp dir');
  const missing = await runPinclawAsync(['skills', 'enable', 'weather', '--yes'], { env: h.env });
  t.match(missing.stderr, /no skill named "weather"/);
});

t.test('install without --yes and without a terminal writes nothing', async (t) => {
  const h = home();
  const r = await runPinclawAsync(['skills', 'install', join(skillDir(), 'weather')], { env: h.env });
  t.equal(r.code, 1);
  t.match(r.stdout, /scripts\/read\.sh/, 'the listing is shown');
  t.match(r.stderr, /needs your confirmation.*--yes/);
  t.notOk(existsSync(join(h.ws, 'skills', 'weather')));
});

t.test('from a .tar.gz (system tar) and a .zip (system zip), --enable and --force', async (t) => {
  const h = home();
  const base = skillDir();
  // Over 100 bytes: GNU tar's default format writes it as a GNU long name entry.
  const deep = `docs/${'d'.repeat(90)}/${'n'.repeat(40)}.md`;
  mkdirSync(join(base, 'weather', deep, '..'), { recursive: true });
  writeFileSync(join(base, 'weather', deep), 'deep\n');
  execFileSync('tar', ['czf', 'w.tar.gz', 'weather'], { cwd: base });
  execFileSync('zip', ['-qr', 'w.zip', 'weather'], { cwd: base });
  const tgz = await runPinclawAsync(['skills', 'install', join(base, 'w.tar.gz'), '--yes'], { env: h.env });
  t.equal(tgz.code, 0, tgz.stderr);
  t.match(tgz.stdout, /installed weather \(disabled\)/);
  t.equal(statSync(join(h.ws, 'skills', 'weather', 'scripts', 'read.sh')).mode & 0o777, 0o755);
  t.equal(readFileSync(join(h.ws, 'skills', 'weather', deep), 'utf8'), 'deep\n', 'a long path from GNU tar');
  writeFileSync(join(base, 'weather', 'notes.txt'), 'new notes\n');
  execFileSync('zip', ['-qr', 'w2.zip', 'weather'], { cwd: base });
  const zip = await runPinclawAsync(['skills', 'install', join(base, 'w2.zip'), '--yes', '--force', '--enable'], { env: h.env });
  t.equal(zip.code, 0, zip.stderr);
  t.match(zip.stdout, /replacing the skill there/);
  t.equal(readFileSync(join(h.ws, 'skills', 'weather', 'notes.txt'), 'utf8'), 'new notes\n');
  t.equal(statSync(join(h.ws, 'skills', 'weather', 'scripts', 'read.sh')).mode & 0o777, 0o755, 'the mode from the zip');
  t.same(readSkills(h.ws).map((s) => s.name), ['weather'], 'enabled');
  t.same(readdirSync(join(h.ws, 'skills')), ['weather'], 'the replaced copy is gone');
});

t.test('hostile archives are refused before a byte is written', async (t) => {
  const h = home();
  // One installed skill, so that "unchanged" is checked against something.
  t.equal((await runPinclawAsync(['skills', 'install', join(skillDir('keep'), 'keep'), '--yes'], { env: h.env })).code, 0);
  const before = snapshot(join(h.ws, 'skills'));
  const dir = tempDir();
  const skillMd = '---\\nname: evil\\ndescription: x\\n---\\n';
  const tarOf = (file: string, body: string) =>
    py(`import tarfile, io, sys
t = tarfile.open(sys.argv[1], 'w:gz', compresslevel=1)
def add(name, data=b'', **kw):
    i = tarfile.TarInfo(name); i.size = len(data)
    for k, v in kw.items(): setattr(i, k, v)
    t.addfile(i, io.BytesIO(data))
add('evil/SKILL.md', b'${skillMd}')
${body}
t.close()`, join(dir, file));
  const zipOf = (file: string, body: string) =>
    py(`import zipfile, sys
z = zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_DEFLATED)
z.writestr('evil/SKILL.md', b'${skillMd}')
def link(name, target):
    i = zipfile.ZipInfo(name); i.create_system = 3; i.external_attr = (0o120777 << 16)
    z.writestr(i, target)
${body}
z.close()`, join(dir, file));
  tarOf('dotdot.tar.gz', "add('evil/../../x', b'pwned')");
  tarOf('abs.tar.gz', "add('/etc/x', b'pwned')");
  tarOf('symlink.tar.gz', "add('evil/link', type=tarfile.SYMTYPE, linkname='/etc/passwd')");
  tarOf('hardlink.tar.gz', "add('evil/hard', type=tarfile.LNKTYPE, linkname='evil/SKILL.md')");
  // 100 MB of zeros: the header declares the size, so the read stops there (the gzip is ~100 KB).
  tarOf('zeros.tar.gz', "add('evil/zeros', b'\\0' * (100 * 1024 * 1024))");
  // A 2 MB path in a pax header: held in memory, so refused by its size before it is read.
  tarOf('pax.tar.gz', "t.format = tarfile.PAX_FORMAT; add('evil/' + 'a' * 2000000, b'x')");
  tarOf('many.tar.gz', "for i in range(1001): add(f'evil/f{i}', b'')")
  zipOf('dotdot.zip', "z.writestr('../x', b'pwned')");
  zipOf('abs.zip', "z.writestr('/etc/x', b'pwned')");
  zipOf('symlink.zip', "link('evil/link', '/etc/passwd')");
  zipOf('zeros.zip', "z.writestr('evil/zeros', b'\\0' * (100 * 1024 * 1024))");
  // A directory: a symlink in it, and a sparse 100 MB file (refused by its size, not read).
  const linkDir = join(skillDir('evil'), 'evil');
  execFileSync('ln', ['-s', '/etc/passwd', join(linkDir, 'link')]);
  const bigDir = join(skillDir('evil'), 'evil');
  writeFileSync(join(bigDir, 'zeros'), '');
  truncateSync(join(bigDir, 'zeros'), 100 * 1024 * 1024);
  const cases: [string, RegExp][] = [
    [join(dir, 'dotdot.tar.gz'), /"evil\/\.\.\/\.\.\/x" has a '\.\.' component/],
    [join(dir, 'abs.tar.gz'), /"\/etc\/x" is an absolute path/],
    [join(dir, 'symlink.tar.gz'), /evil\/link: entry type '2' \(a symbolic link\) is not a file or a directory/],
    [join(dir, 'hardlink.tar.gz'), /evil\/hard: entry type '1' \(a hard link\)/],
    [join(dir, 'zeros.tar.gz'), /more than 16 MiB of files \(at evil\/zeros\)/],
    [join(dir, 'pax.tar.gz'), /a pax header of \d+ bytes \(at most 1048576\)/],
    [join(dir, 'many.tar.gz'), /more than 1000 files and directories/],
    [join(dir, 'dotdot.zip'), /"\.\.\/x" has a '\.\.' component/],
    [join(dir, 'abs.zip'), /"\/etc\/x" is an absolute path/],
    [join(dir, 'symlink.zip'), /evil\/link: a symbolic link, not a file or a directory/],
    [join(dir, 'zeros.zip'), /more than 16 MiB of files \(at evil\/zeros\)/],
    [linkDir, /link is a symbolic link/],
    [bigDir, /more than 16 MiB of files \(at zeros\)/],
  ];
  for (const [src, why] of cases) {
    const r = await runPinclawAsync(['skills', 'install', src, '--yes', '--enable'], { env: h.env });
    t.equal(r.code, 1, `${src}: refused`);
    t.match(r.stderr, why, src);
    t.match(r.stderr, /refused before anything was written/, src);
    t.same(snapshot(join(h.ws, 'skills')), before, `${src}: workspace/skills unchanged`);
  }
  t.notOk(existsSync(join(h.home, 'x')) || existsSync(join(h.ws, 'x')));
});

t.test('front matter errors name the file and the field', async (t) => {
  const h = home();
  const cases: [string, RegExp][] = [
    ['description: no name', /SKILL\.md: name: missing/],
    ['name: Bad_Name\ndescription: x', /SKILL\.md: name: "Bad_Name" is not a skill name: lowercase letters, digits and '-'/],
    ['name: ok', /SKILL\.md: description: missing/],
    ['name: ok\ndescription: x\ntools: [gpio write]', /SKILL\.md: tools: "gpio write" is not a tool name/],
  ];
  for (const [fm, why] of cases) {
    const src = join(skillDir('ok', fm), 'ok');
    const r = await runPinclawAsync(['skills', 'install', src, '--yes'], { env: h.env });
    t.equal(r.code, 1);
    t.match(r.stderr, why);
    t.match(r.stderr, src, 'names the source');
  }
  const block = join(skillDir('ok', 'name: ok\ndescription: >\n  folded\n  text\ntools:\n  - sensor_read\n  - "gpio_write"'), 'ok');
  const r = await runPinclawAsync(['skills', 'install', block, '--yes', '--json'], { env: h.env });
  t.equal(r.code, 0, r.stderr);
  t.match(JSON.parse(r.stdout), { name: 'ok', description: 'folded text', tools: ['sensor_read', 'gpio_write'], enabled: false });
  t.same(snapshot(join(h.ws, 'skills')).length > 0, true);
});

t.test('from an https URL on 127.0.0.1; http and oversized downloads are refused', async (t) => {
  const dir = tempDir();
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'key.pem', '-out', 'cert.pem', '-days', '2', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { cwd: dir, stdio: 'ignore' });
  const base = skillDir();
  execFileSync('tar', ['czf', 'w.tar.gz', 'weather'], { cwd: base });
  const archive = readFileSync(join(base, 'w.tar.gz'));
  const server: Server = createServer({ key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) }, (req, res) => {
    if (req.url === '/w.tar.gz') return res.end(archive);
    if (req.url === '/moved') {
      res.writeHead(302, { location: '/w.tar.gz' });
      return res.end();
    }
    if (req.url === '/endless') {
      // No content-length: the limit has to stop the download as it streams.
      res.writeHead(200);
      const chunk = Buffer.alloc(1 << 20);
      const more = () => {
        while (res.write(chunk)) if (res.destroyed) return;
      };
      res.on('drain', more);
      res.on('close', () => res.off('drain', more));
      return more();
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => server.close());
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const h = home({ NODE_EXTRA_CA_CERTS: join(dir, 'cert.pem') });
  const r = await runPinclawAsync(['skills', 'install', `${url}/moved`, '--yes'], { env: h.env });
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, /scripts\/read\.sh {2}\[script, executable\]/);
  t.equal(readFileSync(join(h.ws, 'skills', 'weather', 'scripts', 'read.sh'), 'utf8'), '#!/bin/sh\necho 21.5\n');
  const before = snapshot(join(h.ws, 'skills'));

  const untrusted = await runPinclawAsync(['skills', 'install', `${url}/w.tar.gz`, '--yes', '--force'], { env: home().env });
  t.equal(untrusted.code, 1, 'a certificate the machine does not trust is refused');
  t.match(untrusted.stderr, /self[- ]signed certificate/);
  const http = await runPinclawAsync(['skills', 'install', url.replace('https', 'http'), '--yes'], { env: h.env });
  t.match(http.stderr, /only https URLs are fetched/);
  const endless = await runPinclawAsync(['skills', 'install', `${url}/endless`, '--yes', '--force'], { env: h.env });
  t.equal(endless.code, 1);
  t.match(endless.stderr, /more than 16 MiB; download stopped/);
  const gone = await runPinclawAsync(['skills', 'install', `${url}/nothing`, '--yes'], { env: h.env });
  t.match(gone.stderr, /the server answered 404/);
  t.same(snapshot(join(h.ws, 'skills')), before, 'nothing written by the refused ones');
});

t.test('at a terminal: the owner is asked after the listing; no leaves everything as it was', async (t) => {
  const h = home();
  const out: string[] = [];
  const err: string[] = [];
  const ctx = { paths: resolvePaths({}, { PINCLAW_HOME: h.home }), json: false, out: (l: string) => out.push(l), err: (l: string) => err.push(l), env: h.env };
  const questions: string[] = [];
  const answer = (a: string) => async (q: string) => {
    questions.push(q);
    return a;
  };
  const src = join(skillDir(), 'weather');
  t.equal(await runSkills('install', [src], ctx, answer('n')), 1);
  t.match(out.join('\n'), /scripts\/read\.sh {2}\[script, executable\]/, 'the listing comes first');
  t.same(questions, ['install weather? [y/N] ']);
  t.same(snapshot(join(h.ws, 'skills')), ['(absent)'], 'nothing written');
  t.equal(await runSkills('install', [src], ctx, answer('y')), 0);
  t.ok(existsSync(join(h.ws, 'skills', 'weather', '.disabled')));
  out.length = 0;
  t.equal(await runSkills('enable', ['weather'], ctx, answer('')), 1, 'an empty answer is no');
  t.match(out.join('\n'), /asks for the tools: sensor_read, gpio_write/);
  t.match(questions[2]!, /^enable weather\?/);
  t.ok(existsSync(join(h.ws, 'skills', 'weather', '.disabled')), 'still disabled');
  t.equal(await runSkills('enable', ['weather'], ctx, answer('yes')), 0);
  t.same(readSkills(h.ws).map((s) => s.name), ['weather']);
  t.equal(await runSkills('remove', ['weather'], ctx, answer('y')), 0);
  t.same(snapshot(join(h.ws, 'skills')), []);
});
