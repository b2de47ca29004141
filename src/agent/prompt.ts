// The system prompt: identity, time, runtime and board, the workspace files (each capped), the
// skills summary, and whatever the memory hook contributes.
import { frontMatter } from '../skills/front-matter.js';
import { dayText, systemZone } from '../local-time.js';
import { readdirSync, readFileSync, statSync, type BigIntStats } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { PROMPT_FILES } from './workspace.js';
import { isSkillEnabled } from '../skills/state.js';
import { onRelease } from '../release.js';

export const FILE_CAP_CHARS = 12_000;

export interface PromptInput {
  workspace: string;
  now: Date;
  timezone?: string;
  runtime: { version: string; node: string; arch: string; model: string; channel: string };
  /** board profile summary from the hardware capability; undefined until a board is known */
  board?: string;
  /** relevant memories for this turn (the memory capability fills this) */
  memories?: string[];
}

export interface Skill {
  name: string;
  description: string;
  path: string;
}

/**
 * The prompt's files as last read, kept while each is unchanged: the prompt is built for every turn
 * and its files rarely change, and a stat is one system call where a read is four and a decode.
 * A file changed less than RACY_NS ago is read every time (as git treats a "racily clean" index
 * entry): the kernel's file times advance in clock ticks, so two writes of the same size within one
 * tick would look alike.
 */
const readCache = new Map<string, { signature: string; text: string }>();
const RACY_NS = 2_000_000_000n;
onRelease('prompt files', () => readCache.clear());

/** The path's stat, or undefined when it is absent or not readable (a path through a file: as if absent). */
function statOf(path: string): BigIntStats | undefined {
  try {
    return statSync(path, { throwIfNoEntry: false, bigint: true });
  } catch {
    return undefined;
  }
}

/** What tells one version of a file or directory from the next. */
const signatureOf = (st: BigIntStats) => `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;

/** Changed long enough ago that a later change cannot share its times (the racy rule above). */
const settled = (st: BigIntStats) => BigInt(Date.now()) * 1_000_000n - st.ctimeNs > RACY_NS;

function readText(file: string): string | null {
  const st = statOf(file);
  if (!st?.isFile()) {
    readCache.delete(file);
    return null;
  }
  const signature = signatureOf(st);
  const hit = readCache.get(file);
  if (hit?.signature === signature) return hit.text;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return null;
  }
  if (settled(st)) readCache.set(file, { signature, text });
  else readCache.delete(file);
  return text;
}

function readCapped(file: string, cap: number): string | null {
  const text = readText(file);
  if (text === null) return null;
  if (text.length <= cap) return text.trimEnd();
  return `${text.slice(0, cap).trimEnd()}\n\n[… ${text.length - cap} more characters cut; read the whole file with read_file if needed]`;
}

/**
 * The skill directories' names, kept while the skills directory is unchanged: a name comes or goes
 * only with an entry of that directory, which changes its times (the same racy rule as readText).
 * A stat where a listing is four system calls and an object per entry.
 */
let listed: { dir: string; signature: string; names: string[] } | undefined;
onRelease('skill names', () => (listed = undefined));

function skillNames(dir: string): string[] | null {
  const st = statOf(dir);
  if (!st?.isDirectory()) return null;
  const signature = signatureOf(st);
  if (listed?.dir === dir && listed.signature === signature) return listed.names;
  let names: string[];
  try {
    names = readdirSync(dir, { withFileTypes: true }).filter((d) => d.isDirectory() && !d.name.startsWith('.')).map((d) => d.name).sort();
  } catch {
    return null;
  }
  listed = settled(st) ? { dir, signature, names } : undefined;
  return names;
}

/**
 * name and description from the YAML-style front matter of skills/<name>/SKILL.md, for the enabled
 * skills only (`pinclaw skills disable` leaves a marker). Names that start with a dot are skipped:
 * an install being written (src/skills/install.ts) or one being replaced.
 */
export function readSkills(workspace: string): Skill[] {
  const dir = join(workspace, 'skills');
  const names = skillNames(dir);
  if (!names) return [];
  const skills: Skill[] = [];
  for (const name of names) {
    if (!isSkillEnabled(join(dir, name))) continue;
    const path = join(dir, name, 'SKILL.md');
    const text = readText(path);
    if (text === null) continue;
    const fm = frontMatter(text);
    const description = fm.description?.trim().replace(/\s+/g, ' ');
    skills.push({ name: fm.name?.trim() || name, description: description || '(no description)', path });
  }
  return skills;
}

export function buildSystemPrompt(p: PromptInput): string {
  const tz = p.timezone ?? systemZone();
  // Day granularity keeps the prompt byte-identical for a day, so its cache entry stays valid; each
  // user message carries its own time of day.
  const local = dayText(p.now, tz);
  const parts: string[] = [
    'You are pinclaw, a personal AI agent running on a small Linux computer that belongs to your owner. You can act on its hardware through tools.',
    `## Date\nToday is ${local}, time zone ${tz}. Each message starts with the time it was sent.`,
    `## Runtime\npinclaw ${p.runtime.version} on Node ${p.runtime.node} ${p.runtime.arch}, host ${hostname()}; model ${p.runtime.model}; this message came through ${p.runtime.channel}.`,
    `## Board\n${p.board ?? 'No board profile is configured or detected.'}`,
  ];
  for (const name of PROMPT_FILES) {
    const text = readCapped(join(p.workspace, name), FILE_CAP_CHARS);
    if (text) parts.push(`## ${name}\n${text}`);
  }
  const skills = readSkills(p.workspace);
  if (skills.length) {
    parts.push(`## Skills\nRead a skill's file with read_file before using it.\n${skills.map((s) => `- ${s.name}: ${s.description} (${s.path})`).join('\n')}`);
  }
  if (p.memories?.length) parts.push(`## Relevant memories\n${p.memories.map((m) => `- ${m}`).join('\n')}`);
  return parts.join('\n\n');
}
