// The type check (`npm run typecheck`: tsc over src, test, scripts and bench) as part of `npm test`:
// tap runs the TypeScript without checking its types, so a type error would otherwise land unseen.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const tsc = fileURLToPath(new URL('../node_modules/typescript/bin/tsc', import.meta.url));

t.test('tsc -p . reports no errors', async (t) => {
  const r = spawnSync(process.execPath, [tsc, '-p', '.', '--pretty', 'false'], { cwd: root, encoding: 'utf8', timeout: 240_000 });
  const errors = `${r.stdout}${r.stderr}`.split('\n').filter((l) => /error TS\d+/.test(l));
  t.same(errors, [], 'no type errors');
  t.equal(r.status, 0, r.error?.message ?? `tsc exited ${r.status ?? r.signal}`);
});
