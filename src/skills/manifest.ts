// The front matter of a skill's SKILL.md, checked before a skill is installed or enabled: the
// format other agents use (Claude Code, OpenClaw: YAML front matter with `name` and `description`),
// read by the prompt's own parser (src/skills/front-matter.ts) so that what is checked here is what
// the prompt shows. `tools`, the tools a skill says it needs, is a list, which that parser skips by
// design; it is read here from its one key: a flow list `[a, b]`, `- a` lines, or `a, b`.
import { PinclawError } from '../errors.js';
import { frontMatter } from './front-matter.js';

export interface SkillManifest {
  name: string;
  description: string;
  /** the tools the skill asks for, as written (the owner sees them on install and enable) */
  tools: string[];
}

/** The rule of the Agent Skills format: lowercase letters, digits and hyphens, at most 64. */
const NAME = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;
const MAX_DESCRIPTION = 1024;
/** A tool name as the registry and MCP name them (`gpio_write`, `home__lights`, `web.fetch`). */
const TOOL = /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/;

export class ManifestError extends PinclawError {
  constructor(message: string) {
    super(message);
    this.name = 'ManifestError';
  }
}

/** The `tools:` key's items, or undefined when the key is absent. */
function toolsList(text: string, file: string): string[] | undefined {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  if (!/^---[ \t]*$/.test(lines[0] ?? '')) return undefined;
  const end = lines.findIndex((l, i) => i > 0 && /^---[ \t]*$/.test(l));
  if (end < 0) return undefined;
  const at = lines.slice(1, end).findIndex((l) => /^tools[ \t]*:/.test(l));
  if (at < 0) return undefined;
  const rest = lines[at + 1]!.replace(/^tools[ \t]*:/, '').replace(/(^|[ \t])#.*$/, '').trim();
  let items: string[];
  if (rest.startsWith('[')) {
    if (!rest.endsWith(']')) throw new ManifestError(`${file}: tools: a list in brackets must close on its line, e.g. tools: [gpio_write, sensor_read]`);
    items = rest.slice(1, -1).split(',');
  } else if (rest === '') {
    items = [];
    for (const line of lines.slice(at + 2, end)) {
      if (/^[ \t]*(#.*)?$/.test(line)) continue;
      const m = /^[ \t]*-[ \t]+(.*)$/.exec(line);
      if (!m) break;
      items.push(m[1]!.replace(/(^|[ \t])#.*$/, ''));
    }
  } else items = rest.split(',');
  const names = items.map((s) => s.trim().replace(/^(["'])(.*)\1$/, '$2')).filter((s) => s !== '');
  for (const n of names) {
    if (!TOOL.test(n)) throw new ManifestError(`${file}: tools: ${JSON.stringify(n)} is not a tool name (a letter, then letters, digits, '_', '.' or '-', at most 64)`);
  }
  return [...new Set(names)];
}

/** Checks SKILL.md's text; errors name the file, the field and what to write instead. */
export function parseManifest(text: string, file: string): SkillManifest {
  if (!/^\uFEFF?---[ \t]*\r?\n/.test(text)) {
    throw new ManifestError(`${file}: no front matter: the file must start with a '---' line, then 'name: ...' and 'description: ...', then '---'`);
  }
  const fm = frontMatter(text);
  const name = fm.name?.trim();
  if (!name) throw new ManifestError(`${file}: name: missing (e.g. name: weather-report)`);
  if (!NAME.test(name)) {
    throw new ManifestError(`${file}: name: ${JSON.stringify(name.slice(0, 80))} is not a skill name: lowercase letters, digits and '-', at most 64, not starting or ending with '-' (it is the directory's name under workspace/skills/)`);
  }
  const description = fm.description?.trim().replace(/\s+/g, ' ');
  if (!description) throw new ManifestError(`${file}: description: missing (one line that says what the skill does and when to use it)`);
  if (description.length > MAX_DESCRIPTION) throw new ManifestError(`${file}: description: ${description.length} characters, at most ${MAX_DESCRIPTION} (it goes into every prompt; the body of SKILL.md holds the rest)`);
  return { name, description, tools: toolsList(text, file) ?? [] };
}
