// Building fake /proc, /sys and /dev trees in a temp dir: a file with its directories, a symlink.
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

export function write(file: string, text: string): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
}

export function link(target: string, at: string): void {
  mkdirSync(dirname(at), { recursive: true });
  symlinkSync(target, at);
}
