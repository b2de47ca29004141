// Just enough of ELF64 (little-endian, what both VMs run) to answer two questions without running
// the target's tools: which shared libraries and loader a program needs (PT_INTERP, DT_NEEDED), and
// what a kernel module's .modinfo says (its `depends=`). Reads only the bytes it needs, because the
// programs in question include 100+ MB single executables.
import { closeSync, openSync, readSync } from 'node:fs';

const PT_LOAD = 1;
const PT_DYNAMIC = 2;
const PT_INTERP = 3;
const DT_NULL = 0n;
const DT_NEEDED = 1n;
const DT_STRTAB = 5n;
const DT_STRSZ = 10n;

interface Segment {
  type: number;
  offset: number;
  vaddr: number;
  filesz: number;
}

interface Section {
  nameOffset: number;
  offset: number;
  size: number;
}

export interface ElfInfo {
  machine: number;
  interp: string | null;
  needed: string[];
}

class ElfFile {
  private readonly fd: number;

  constructor(readonly path: string) {
    this.fd = openSync(path, 'r');
  }

  close(): void {
    closeSync(this.fd);
  }

  read(offset: number, length: number): Buffer {
    const buf = Buffer.alloc(length);
    const got = readSync(this.fd, buf, 0, length, offset);
    if (got !== length) throw new Error(`${this.path}: truncated ELF (wanted ${length} bytes at ${offset})`);
    return buf;
  }

  header(): Buffer | null {
    const h = Buffer.alloc(64);
    if (readSync(this.fd, h, 0, 64, 0) < 64) return null;
    if (h.readUInt32BE(0) !== 0x7f454c46) return null;
    if (h[4] !== 2 || h[5] !== 1) throw new Error(`${this.path}: only 64-bit little-endian ELF is supported`);
    return h;
  }

  segments(h: Buffer): Segment[] {
    const phoff = Number(h.readBigUInt64LE(0x20));
    const size = h.readUInt16LE(0x36);
    const count = h.readUInt16LE(0x38);
    const table = this.read(phoff, size * count);
    return Array.from({ length: count }, (_, i) => {
      const p = i * size;
      return {
        type: table.readUInt32LE(p),
        offset: Number(table.readBigUInt64LE(p + 8)),
        vaddr: Number(table.readBigUInt64LE(p + 16)),
        filesz: Number(table.readBigUInt64LE(p + 32)),
      };
    });
  }

  sections(h: Buffer): { sections: Section[]; names: Buffer } {
    const shoff = Number(h.readBigUInt64LE(0x28));
    const size = h.readUInt16LE(0x3a);
    const count = h.readUInt16LE(0x3c);
    const strndx = h.readUInt16LE(0x3e);
    const table = this.read(shoff, size * count);
    const sections = Array.from({ length: count }, (_, i) => {
      const p = i * size;
      return { nameOffset: table.readUInt32LE(p), offset: Number(table.readBigUInt64LE(p + 24)), size: Number(table.readBigUInt64LE(p + 32)) };
    });
    const strtab = sections[strndx];
    if (!strtab) throw new Error(`${this.path}: bad section name table index`);
    return { sections, names: this.read(strtab.offset, strtab.size) };
  }
}

function cString(buf: Buffer, offset: number): string {
  const end = buf.indexOf(0, offset);
  return buf.toString('utf8', offset, end < 0 ? buf.length : end);
}

/** Loader and DT_NEEDED libraries of an ELF file; null when the file is not ELF at all. */
export function readElfInfo(path: string): ElfInfo | null {
  const elf = new ElfFile(path);
  try {
    const h = elf.header();
    if (!h) return null;
    const machine = h.readUInt16LE(0x12);
    const segments = elf.segments(h);
    const interpSeg = segments.find((s) => s.type === PT_INTERP);
    const interp = interpSeg ? cString(elf.read(interpSeg.offset, interpSeg.filesz), 0) : null;
    const dynSeg = segments.find((s) => s.type === PT_DYNAMIC);
    if (!dynSeg) return { machine, interp, needed: [] };
    const dyn = elf.read(dynSeg.offset, dynSeg.filesz);
    const neededOffsets: bigint[] = [];
    let strtabAddr: bigint | null = null;
    let strtabSize = 0;
    for (let p = 0; p + 16 <= dyn.length; p += 16) {
      const tag = dyn.readBigInt64LE(p);
      const value = dyn.readBigUInt64LE(p + 8);
      if (tag === DT_NULL) break;
      if (tag === DT_NEEDED) neededOffsets.push(value);
      if (tag === DT_STRTAB) strtabAddr = value;
      if (tag === DT_STRSZ) strtabSize = Number(value);
    }
    if (strtabAddr === null) return { machine, interp, needed: [] };
    // DT_STRTAB is a virtual address: find the loaded segment holding it to get a file offset.
    const addr = Number(strtabAddr);
    const load = segments.find((s) => s.type === PT_LOAD && addr >= s.vaddr && addr < s.vaddr + s.filesz);
    if (!load) throw new Error(`${path}: DT_STRTAB is outside every PT_LOAD segment`);
    const strtab = elf.read(load.offset + (addr - load.vaddr), strtabSize);
    const needed = neededOffsets.map((off) => cString(strtab, Number(off)));
    return { machine, interp, needed };
  } finally {
    elf.close();
  }
}

/** The key=value pairs of a kernel module's .modinfo section (a field may repeat, e.g. alias). */
export function readModinfo(path: string): Map<string, string[]> {
  const elf = new ElfFile(path);
  try {
    const h = elf.header();
    if (!h) throw new Error(`${path} is not an ELF file (a compressed module?)`);
    const { sections, names } = elf.sections(h);
    const modinfo = sections.find((s) => cString(names, s.nameOffset) === '.modinfo');
    if (!modinfo) throw new Error(`${path} has no .modinfo section; is it a kernel module?`);
    const info = new Map<string, string[]>();
    for (const entry of elf.read(modinfo.offset, modinfo.size).toString('utf8').split('\0')) {
      const eq = entry.indexOf('=');
      if (eq <= 0) continue;
      const key = entry.slice(0, eq);
      info.set(key, [...(info.get(key) ?? []), entry.slice(eq + 1)]);
    }
    return info;
  } finally {
    elf.close();
  }
}
