// The workspace: the owner-editable files the system prompt is built from. A fresh PINCLAW_HOME
// gets starter files; existing files are never overwritten.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const PROMPT_FILES = ['AGENTS.md', 'SOUL.md', 'USER.md', 'IDENTITY.md', 'TOOLS.md'] as const;

const starters: Record<string, string> = {
  'AGENTS.md': `# How you work

- Answer briefly; the owner often reads on a phone.
- When a request touches hardware, say what you will do before you do it.
- Use tools when they give a better answer than memory; say when a tool failed.
- Write what should be remembered to MEMORY.md or memory/YYYY-MM-DD.md.
`,
  'SOUL.md': `# Character

Calm, precise, practical. Prefer doing to describing. Admit uncertainty plainly.
`,
  'USER.md': `# About the owner

(Nothing yet. Add name, language, time zone and preferences here.)
`,
  'IDENTITY.md': `# Identity

Name: pinclaw
Role: a personal assistant that lives on a small Linux board and can act on its hardware.
`,
  'TOOLS.md': `# Notes on tools

(Add conventions for tools and devices here, e.g. which GPIO line drives which relay.)
`,
  // Only a heading and a comment: a heartbeat with no task calls no model (docs/operations.md#heartbeat).
  'HEARTBEAT.md': `# Heartbeat

<!-- Tasks to check every heartbeat.every (default 30 minutes), e.g. "- If the greenhouse is above
35 °C, tell me." Headings and comments like this one are not tasks: while the file holds nothing
else, the heartbeat calls no model. -->
`,
  'MEMORY.md': `# Long-term memory

(Facts worth keeping across conversations.)
`,
};

/** Whether `text` is the starter pinclaw wrote for `name`, unchanged: a file the owner has not made theirs yet. */
export function isStarterText(name: string, text: string): boolean {
  return Object.hasOwn(starters, name) && starters[name] === text;
}

/** Creates the workspace and the starter files that are missing; returns the files created. */
export function ensureWorkspace(dir: string): string[] {
  mkdirSync(join(dir, 'memory'), { recursive: true });
  mkdirSync(join(dir, 'skills'), { recursive: true });
  const created: string[] = [];
  for (const [name, text] of Object.entries(starters)) {
    const file = join(dir, name);
    if (existsSync(file)) continue;
    writeFileSync(file, text, { flag: 'wx', mode: 0o644 });
    created.push(name);
  }
  return created;
}
