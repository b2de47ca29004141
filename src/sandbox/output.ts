// stdout and stderr of one command, kept up to a shared byte cap; beyond it, bytes are only
// counted. Decoding happens once at the end, so a character split across chunks stays whole.
import type { OutputStream } from './types.js';

export class CappedOutput {
  private readonly kept: Record<OutputStream, Buffer[]> = { stdout: [], stderr: [] };
  private size = 0;
  private omitted = 0;

  constructor(
    private readonly cap: number,
    private readonly listener?: (stream: OutputStream, chunk: Buffer) => void,
  ) {}

  add(stream: OutputStream, chunk: Buffer): void {
    const room = Math.max(0, this.cap - this.size);
    const keep = chunk.length <= room ? chunk : chunk.subarray(0, room);
    this.omitted += chunk.length - keep.length;
    if (keep.length === 0) return;
    this.kept[stream].push(keep);
    this.size += keep.length;
    this.listener?.(stream, keep);
  }

  /** Bytes a backend read but did not hand over count as omitted too. */
  addOmitted(bytes: number): void {
    this.omitted += bytes;
  }

  get omittedBytes(): number {
    return this.omitted;
  }

  text(stream: OutputStream): string {
    return Buffer.concat(this.kept[stream]).toString('utf8');
  }
}
