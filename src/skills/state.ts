// Whether an installed skill is on: a marker file in its directory. A file rather than a list in
// the config or the database, so that it travels with the skill through backup and restore (the
// workspace is archived as it is), and a skill copied in by hand (no marker) stays on as before.
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/** The marker's name; an archive may not carry it (src/skills/entries.ts refuses it). */
export const DISABLED_MARKER = '.disabled';

export function isSkillEnabled(skillDir: string): boolean {
  return !existsSync(join(skillDir, DISABLED_MARKER));
}
