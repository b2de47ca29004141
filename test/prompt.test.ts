// The system prompt: starter workspace, capped files, skills from front matter, date and runtime.
import t from 'tap';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { clockTime } from '../src/local-time.js';
import { buildSystemPrompt, FILE_CAP_CHARS, readSkills } from '../src/agent/prompt.js';
import { ensureWorkspace, PROMPT_FILES } from '../src/agent/workspace.js';
import { DISABLED_MARKER } from '../src/skills/state.js';
import { openDatabase } from '../src/store/db.js';
import { loadSession, saveSession } from '../src/store/sessions.js';
import { tempDir } from './support/proc.js';

const runtime = { version: '9.9.9', node: 'v24', arch: 'arm64', model: 'anthropic/x', channel: 'telegram' };

t.test('a fresh workspace gets starter files; existing files are kept', async (t) => {
  const ws = join(tempDir(), 'workspace');
  const created = ensureWorkspace(ws);
  t.same(created.sort(), ['AGENTS.md', 'HEARTBEAT.md', 'IDENTITY.md', 'MEMORY.md', 'SOUL.md', 'TOOLS.md', 'USER.md']);
  t.ok(existsSync(join(ws, 'skills')) && existsSync(join(ws, 'memory')));
  writeFileSync(join(ws, 'USER.md'), 'Name: Ada');
  t.same(ensureWorkspace(ws), [], 'nothing recreated');
  t.equal(readFileSync(join(ws, 'USER.md'), 'utf8'), 'Name: Ada');
});

t.test('the prompt holds identity, date, runtime, board, files (capped) and skills', async (t) => {
  const ws = join(tempDir(), 'workspace');
  ensureWorkspace(ws);
  writeFileSync(join(ws, 'TOOLS.md'), 'relay on GPIO 17\n' + 'x'.repeat(FILE_CAP_CHARS + 500));
  mkdirSync(join(ws, 'skills', 'weather'), { recursive: true });
  writeFileSync(join(ws, 'skills', 'weather', 'SKILL.md'), '---\nname: weather\ndescription: "reads the BME280 and explains it"\n---\n# Weather\nlong body');
  mkdirSync(join(ws, 'skills', 'bare'), { recursive: true });
  writeFileSync(join(ws, 'skills', 'bare', 'SKILL.md'), 'no front matter');
  const p = buildSystemPrompt({ workspace: ws, now: new Date('2026-03-01T10:00:00Z'), timezone: 'Europe/Berlin', runtime, memories: ['owner prefers Celsius'] });
  t.match(p, /^You are pinclaw/);
  t.match(p, 'Today is Sunday, 1 March 2026, time zone Europe/Berlin');
  t.match(p, 'pinclaw 9.9.9 on Node v24 arm64');
  t.match(p, 'this message came through telegram');
  t.match(p, 'No board profile is configured or detected.');
  for (const f of PROMPT_FILES) t.match(p, `## ${f}\n`);
  t.match(p, 'relay on GPIO 17');
  t.match(p, /\[… 517 more characters cut; read the whole file with read_file if needed\]/);
  t.match(p, /- weather: reads the BME280 and explains it \(.*skills\/weather\/SKILL\.md\)/);
  t.match(p, /- bare: \(no description\)/);
  t.notMatch(p, 'long body', 'only the summary, not the skill body');
  t.match(p, '## Relevant memories\n- owner prefers Celsius');
  t.equal(readSkills(join(tempDir(), 'none')).length, 0);
  t.equal(clockTime(new Date('2026-03-01T10:05:00Z'), 'Europe/Berlin'), '11:05');
});

t.test('the prompt is stable within a day (cacheable)', async (t) => {
  const ws = join(tempDir(), 'workspace');
  ensureWorkspace(ws);
  const at = (iso: string) => buildSystemPrompt({ workspace: ws, now: new Date(iso), timezone: 'UTC', runtime });
  t.equal(at('2026-03-01T08:00:00Z'), at('2026-03-01T21:59:00Z'));
  t.not(at('2026-03-01T08:00:00Z'), at('2026-03-02T08:00:00Z'));
});

t.test('images are stripped before a session is saved', async (t) => {
  const db = openDatabase(join(tempDir(), 'p.db'));
  t.teardown(() => db.close());
  saveSession(db, { key: 'k', meta: {}, messages: [{ role: 'user', content: [{ type: 'image', mediaType: 'image/png', data: 'iVBORw0KGgo'.repeat(1000) }, { type: 'text', text: 'what is this?' }] }] });
  const raw = (db.prepare('select messages from sessions').get() as { messages: string }).messages;
  t.notMatch(raw, 'iVBORw0KGgo');
  t.same(loadSession(db, 'k').messages[0]!.content, [{ type: 'text', text: '[image image/png removed]' }, { type: 'text', text: 'what is this?' }]);
});

// The prompt's files are kept between turns while unchanged (src/agent/prompt.ts readText): each
// change must still reach the next prompt, a same-size rewrite and a removal included, also once the
// files are old enough to be kept.
t.test('a kept prompt file that changes, even to text of the same size, or goes, is seen at the next turn', async (t) => {
  const ws = join(tempDir(), 'workspace');
  ensureWorkspace(ws);
  const build = () => buildSystemPrompt({ workspace: ws, now: new Date('2026-03-01T10:00:00Z'), timezone: 'UTC', runtime });
  writeFileSync(join(ws, 'SOUL.md'), 'mood: calm');
  t.match(build(), 'mood: calm');
  writeFileSync(join(ws, 'SOUL.md'), 'mood: warm');
  t.match(build(), 'mood: warm', 'a rewrite right after the read');
  // Older than the racy window (2 s): now the file is kept, and a change must still show.
  await new Promise((r) => setTimeout(r, 2100));
  t.match(build(), 'mood: warm');
  t.match(build(), 'mood: warm', 'served again while unchanged');
  writeFileSync(join(ws, 'SOUL.md'), 'mood: bold');
  t.match(build(), 'mood: bold', 'a same-size rewrite of a kept file');
  rmSync(join(ws, 'SOUL.md'));
  t.notMatch(build(), 'mood:', 'a removed file leaves the prompt');
});

t.test('a skill added, removed, disabled or renamed after the listing is kept is seen at the next turn', async (t) => {
  const ws = join(tempDir(), 'workspace');
  ensureWorkspace(ws);
  const skill = (name: string, description: string) => {
    mkdirSync(join(ws, 'skills', name), { recursive: true });
    writeFileSync(join(ws, 'skills', name, 'SKILL.md'), `---\nname: ${name}\ndescription: ${description}\n---\nbody`);
  };
  const names = () => readSkills(ws).map((s) => s.name);
  skill('weather', 'reads the BME280');
  t.same(names(), ['weather']);
  // Older than the racy window (2 s): now the listing is kept, and a change must still show.
  await new Promise((r) => setTimeout(r, 2100));
  t.same(names(), ['weather']);
  t.same(names(), ['weather'], 'served again while unchanged');
  skill('lights', 'switches the relay');
  t.same(names(), ['lights', 'weather'], 'a skill added to a kept listing');
  await new Promise((r) => setTimeout(r, 2100));
  t.same(names(), ['lights', 'weather']);
  writeFileSync(join(ws, 'skills', 'lights', DISABLED_MARKER), '');
  t.same(names(), ['weather'], 'a skill disabled after the listing was kept');
  rmSync(join(ws, 'skills', 'lights', DISABLED_MARKER));
  t.same(names(), ['lights', 'weather'], 'and enabled again');
  renameSync(join(ws, 'skills', 'weather'), join(ws, 'skills', 'climate'));
  t.same(readSkills(ws).map((s) => s.path.split('/').at(-2)), ['climate', 'lights'], 'a renamed skill directory');
  rmSync(join(ws, 'skills', 'lights'), { recursive: true });
  t.same(readSkills(ws).map((s) => s.path.split('/').at(-2)), ['climate'], 'a removed skill leaves the prompt');
  rmSync(join(ws, 'skills'), { recursive: true });
  t.same(names(), [], 'no skills directory');
});
