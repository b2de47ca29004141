// Installing, enabling, disabling and removing skills under workspace/skills/. An install is
// planned from what src/skills/source.ts read into memory (every check done there), shown to the
// owner, then written into a temporary directory beside the skills (its name starts with a dot, so
// the prompt skips it) and renamed into place: a skill appears whole or not at all.
import { PinclawError } from '../errors.js';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { parseManifest, type SkillManifest } from './manifest.js';
import type { SkillFile, SkillSource } from './source.js';
import { DISABLED_MARKER, isSkillEnabled } from './state.js';

export class SkillError extends PinclawError {
  constructor(message: string) {
    super(message);
    this.name = 'SkillError';
  }
}

export interface InstallPlan {
  manifest: SkillManifest;
  files: SkillFile[];
  dirs: string[];
  bytes: number;
  /** workspace/skills/NAME */
  dest: string;
  /** a skill of that name is there already */
  exists: boolean;
}

export const skillsDir = (workspace: string) => join(workspace, 'skills');

export function planInstall(workspace: string, source: SkillSource): InstallPlan {
  const skillMd = source.files.find((f) => f.path === 'SKILL.md')!;
  const manifest = parseManifest(skillMd.data.toString('utf8'), `${source.label}: SKILL.md`);
  const dest = join(skillsDir(workspace), manifest.name);
  return { manifest, files: source.files, dirs: source.dirs, bytes: source.files.reduce((n, f) => n + f.size, 0), dest, exists: existsSync(dest) };
}

/** The path of `rel` under `root`, refused if it would leave it (source.ts has refused such paths already). */
function inside(root: string, rel: string): string {
  const abs = join(root, ...rel.split('/'));
  const r = relative(root, abs);
  if (r === '' || r.startsWith('..') || r.split(sep).includes('..')) throw new SkillError(`${rel}: would land outside the skill's directory`);
  return abs;
}

/** Writes the plan; `force` replaces a skill of the same name. Disabled unless `enable`. */
export function writeInstall(plan: InstallPlan, opts: { enable: boolean; force: boolean }): void {
  if (plan.exists && !opts.force) throw new SkillError(`a skill named ${plan.manifest.name} is installed already (${plan.dest}); add --force to replace it`);
  const root = dirname(plan.dest);
  mkdirSync(root, { recursive: true });
  const tmp = mkdtempSync(join(root, `.install-${plan.manifest.name}-`));
  try {
    for (const d of plan.dirs) mkdirSync(inside(tmp, d), { recursive: true });
    for (const f of plan.files) {
      const abs = inside(tmp, f.path);
      mkdirSync(dirname(abs), { recursive: true });
      // The executable bit as the author set it (a script the skill runs); nothing else of the mode.
      writeFileSync(abs, f.data, { flag: 'wx', mode: f.executable ? 0o755 : 0o644 });
    }
    if (!opts.enable) writeFileSync(join(tmp, DISABLED_MARKER), '');
    if (plan.exists) {
      const old = mkdtempSync(join(root, `.replaced-${plan.manifest.name}-`));
      renameSync(plan.dest, join(old, 'skill'));
      renameSync(tmp, plan.dest);
      rmSync(old, { recursive: true, force: true });
    } else renameSync(tmp, plan.dest);
  } catch (err) {
    rmSync(tmp, { recursive: true, force: true });
    throw err;
  }
}

export interface InstalledSkill {
  /** the directory's name */
  name: string;
  dir: string;
  enabled: boolean;
  manifest?: SkillManifest;
  /** what is wrong with its SKILL.md, when something is */
  problem?: string;
}

/** The skills under workspace/skills, valid or not (a hand-copied one may have odd front matter). */
export function listSkills(workspace: string): InstalledSkill[] {
  const root = skillsDir(workspace);
  let names: string[];
  try {
    names = readdirSync(root, { withFileTypes: true }).filter((d) => d.isDirectory() && !d.name.startsWith('.')).map((d) => d.name).sort();
  } catch {
    return [];
  }
  return names.map((name) => describe(root, name));
}

function describe(root: string, name: string): InstalledSkill {
  const dir = join(root, name);
  const s: InstalledSkill = { name, dir, enabled: isSkillEnabled(dir) };
  const file = join(dir, 'SKILL.md');
  try {
    s.manifest = parseManifest(readFileSync(file, 'utf8'), file);
  } catch (err) {
    s.problem = (err as NodeJS.ErrnoException).code === 'ENOENT' ? `${file} is missing` : (err as Error).message;
  }
  return s;
}

/** An installed skill by its directory's name; the name is looked up, never joined as a path. */
export function findSkill(workspace: string, name: string): InstalledSkill {
  const found = listSkills(workspace).find((s) => s.name === name);
  if (!found) {
    const names = listSkills(workspace).map((s) => s.name);
    throw new SkillError(`no skill named ${JSON.stringify(name)} in ${skillsDir(workspace)}${names.length ? ` (installed: ${names.join(', ')})` : ' (none installed)'}`);
  }
  return found;
}

export function setEnabled(skill: InstalledSkill, enabled: boolean): void {
  const marker = join(skill.dir, DISABLED_MARKER);
  if (enabled) rmSync(marker, { force: true });
  else writeFileSync(marker, '');
}

/** Renamed aside first, so that the prompt never sees half a skill while it is deleted. */
export function removeSkill(skill: InstalledSkill): void {
  const root = dirname(skill.dir);
  const aside = mkdtempSync(join(root, `.removing-${skill.name}-`));
  renameSync(skill.dir, join(aside, 'skill'));
  rmSync(aside, { recursive: true, force: true });
}

