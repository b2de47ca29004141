// The listener bookkeeping both link kinds share: data listeners, and a close that is reported
// exactly once, also to a listener that arrives after it (the link may end between being opened
// and being handed to its user).
import { log } from '../../log.js';
import { lead, SerialError, type FailureTarget } from './errors.js';

/** A Node stream either link kind writes to and reads from (a serial port stream, a TCP socket). */
export interface ByteStream {
  write(bytes: Buffer, done: (err?: Error | null) => void): unknown;
  on(event: 'data', listener: (bytes: Buffer) => void): unknown;
}

export class LinkEvents {
  private readonly dataListeners = new Set<(bytes: Buffer) => void>();
  private readonly closeListeners: Array<(reason: Error | null) => void> = [];
  private ended: { reason: Error | null } | null = null;
  private reading = false;

  constructor(private readonly label: string) {}

  get hasEnded(): boolean {
    return this.ended !== null;
  }

  addData(listener: (bytes: Buffer) => void): () => void {
    this.dataListeners.add(listener);
    return () => void this.dataListeners.delete(listener);
  }

  /** A data listener; the stream is read from the first one on (not before: nobody would hear it). */
  listen(stream: ByteStream, listener: (bytes: Buffer) => void): () => void {
    const off = this.addData(listener);
    if (!this.reading && !this.hasEnded) {
      this.reading = true;
      stream.on('data', (b: Buffer) => this.data(b));
    }
    return off;
  }

  /**
   * Writes through the stream; refused at once when the link is done, since a stream would queue the
   * write for a reopen that never comes.
   */
  write(stream: ByteStream, bytes: Uint8Array, closed: boolean, target: FailureTarget, port: string): Promise<void> {
    if (this.hasEnded || closed) return Promise.reject(new SerialError('closed', `${lead(target)}${port} is closed`, { port, device: target.name }));
    return new Promise((resolve, reject) => {
      stream.write(Buffer.from(bytes), (err) => {
        if (!err) return resolve();
        reject(new SerialError('write', `${lead(target)}write to ${port} failed: ${err.message}`, { port, device: target.name }, { cause: err }));
      });
    });
  }

  data(bytes: Buffer): void {
    for (const l of this.dataListeners) {
      // One listener's bug must not stop the others or the read loop.
      try {
        l(bytes);
      } catch (err) {
        log.warn(`${this.label}: a data listener threw: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  }

  addClose(listener: (reason: Error | null) => void): void {
    const ended = this.ended;
    if (ended) process.nextTick(() => this.callClose(listener, ended.reason));
    else this.closeListeners.push(listener);
  }

  /** Reports the end once; later calls are ignored (a disconnect and our own close can race). */
  end(reason: Error | null): void {
    if (this.ended) return;
    this.ended = { reason };
    this.dataListeners.clear();
    for (const l of this.closeListeners.splice(0)) this.callClose(l, reason);
  }

  private callClose(listener: (reason: Error | null) => void, reason: Error | null): void {
    try {
      listener(reason);
    } catch (err) {
      log.warn(`${this.label}: a close listener threw: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
}
