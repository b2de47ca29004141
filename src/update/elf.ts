// The architecture an executable was built for, from its ELF header: a release for the wrong board
// is refused before it replaces anything (it would not even start).
import { closeSync, openSync, readSync } from 'node:fs';

// e_machine values (elf.h) of the architectures pinclaw ships for.
const MACHINES: Record<number, string> = { 62: 'x64', 183: 'arm64', 40: 'arm', 3: 'ia32', 243: 'riscv64' };

export interface ElfInfo {
  /** Node's name for the architecture (process.arch), or "machine N" */
  arch: string;
  bits: 32 | 64;
}

/** The ELF header's architecture; throws naming what the file is when it is no ELF executable. */
export function elfInfo(file: string): ElfInfo {
  const head = Buffer.alloc(20);
  const fd = openSync(file, 'r');
  let n: number;
  try {
    n = readSync(fd, head, 0, head.length, 0);
  } finally {
    closeSync(fd);
  }
  if (n < 20 || head.readUInt32BE(0) !== 0x7f454c46) throw new Error('it is not an ELF executable (no \\x7fELF header)');
  if (head[5] !== 1) throw new Error('it is a big-endian ELF file; pinclaw runs on little-endian boards only');
  const type = head.readUInt16LE(16);
  if (type !== 2 && type !== 3) throw new Error(`it is an ELF file of type ${type}, not an executable`);
  const machine = head.readUInt16LE(18);
  return { arch: MACHINES[machine] ?? `machine ${machine}`, bits: head[4] === 2 ? 64 : 32 };
}
