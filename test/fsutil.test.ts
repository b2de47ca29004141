// writeFileAtomic on real files: a replaced regular file keeps its mode; a symlink at the target is
// replaced by a new file with the default mode, its target neither written nor copied from. Before
// the fix the mode was read through the link (statSync), so a link to a 0755 file elsewhere made
// the new file executable.
import t from 'tap';
import { chmodSync, lstatSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../src/fsutil.js';
import { tempDir } from './support/proc.js';

const modeOf = (p: string) => lstatSync(p).mode & 0o7777;

t.test('a regular file keeps its mode; a new one gets the default', async (t) => {
  const dir = tempDir('pinclaw-fsutil-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const kept = join(dir, 'kept');
  writeFileSync(kept, 'old');
  chmodSync(kept, 0o640);
  writeFileAtomic(kept, 'new', 0o600);
  t.equal(readFileSync(kept, 'utf8'), 'new');
  t.equal(modeOf(kept), 0o640, 'the mode the owner gave it stays');
  writeFileAtomic(join(dir, 'fresh'), 'x', 0o600);
  t.equal(modeOf(join(dir, 'fresh')), 0o600);
});

t.test('a symlink at the target is replaced, not followed for its mode', async (t) => {
  const dir = tempDir('pinclaw-fsutil-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const elsewhere = join(dir, 'script.sh');
  writeFileSync(elsewhere, '#!/bin/sh\n');
  chmodSync(elsewhere, 0o755);
  const link = join(dir, 'config.json');
  symlinkSync(elsewhere, link);
  writeFileAtomic(link, '{}\n', 0o600);
  t.ok(lstatSync(link).isFile(), 'the link is now a regular file');
  t.equal(modeOf(link), 0o600, 'with the default mode, not the mode of the link target');
  t.equal(readFileSync(elsewhere, 'utf8'), '#!/bin/sh\n', 'the target is untouched');
  t.equal(modeOf(elsewhere), 0o755);

  // A link to a directory: its mode (with x bits) is not taken either.
  const dirLink = join(dir, 'to-dir');
  symlinkSync(dir, dirLink);
  writeFileAtomic(dirLink, 'x', 0o644);
  t.equal(modeOf(dirLink), 0o644);
});
