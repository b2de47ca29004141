// The built-in board profiles for the single executable: boards/*.json gathered into one asset,
// boards/boards.json, which src/hardware/boards/builtins.ts reads back (filesFromAsset). One asset
// rather than twelve keeps the asset list short; keeping the profiles out of the JS bundle keeps
// them out of an idle gateway's memory. The full schema check is the TypeScript one
// (test/boards.test.ts runs it over every file); here only what would make the asset unreadable
// stops the build.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Writes <work>/boards.json and returns { asset key: file } for sea-config.json. */
export function boardsAssets(root, work) {
  const dir = join(root, 'boards');
  // Each file's text as it is, and its identify section beside: detection reads those of all the
  // profiles, and a start parses only the text of the one it validates (src/hardware/boards/builtins.ts).
  const identify = {};
  const profiles = {};
  for (const name of readdirSync(dir).filter((n) => n.endsWith('.json')).sort()) {
    const text = readFileSync(join(dir, name), 'utf8');
    let profile;
    try {
      profile = JSON.parse(text);
    } catch (err) {
      throw new Error(`boards/${name}: not valid JSON (${err.message})`);
    }
    if (profile?.id !== name.slice(0, -'.json'.length)) throw new Error(`boards/${name}: its id must be the file name without .json, found ${JSON.stringify(profile?.id)}`);
    identify[name] = profile.identify ?? null;
    profiles[name] = text;
  }
  if (!Object.keys(profiles).length) throw new Error(`no board profiles in ${dir}`);
  const file = join(work, 'boards.json');
  writeFileSync(file, JSON.stringify({ identify, profiles }));
  return { 'boards/boards.json': file };
}
