// The GPIO lines of one process: who holds which line, how, and the safety rules every write and
// read passes. Tools and triggers both come here, so a line a trigger watches is shared with
// gpio_watch instead of failing with EBUSY, and a line gpio_write set stays driven (the BCM2835
// returns a released pin to input, so letting go of an output would undo the write).
//
// Safety, before any line is touched: a line the board profile reserves right now (the UART while
// the serial console is on, I2C pins while I2C is enabled, HAT EEPROM pins) is refused with the
// reason and the rule; a write needs the profile to say the line can be an output; writes to one
// line are rate-limited (hardware.writeRateLimit), so a runaway loop cannot wear out a relay.
import type { PinclawConfig } from '../../config/schema.js';
import type { BoardProfile } from '../boards/schema.js';
import { createWriteLimiter } from '../write-limit.js';
import { GpioError } from './errors.js';
import { createResolver, type NamedLine, type ResolvedLine, type Resolver } from './resolve.js';
import type { EdgeEvent, EdgeSetting, GpioBackend, LineConfig, LineRequest, Level } from './types.js';

export const CONSUMER = 'pinclaw';

type Hardware = PinclawConfig['hardware'];

export interface GpioServiceOptions {
  backend: GpioBackend;
  board?: BoardProfile;
  /** board line name → why it is reserved now (boards/reservations.ts reservedNow) */
  reserved?: ReadonlyMap<string, string>;
  /** board line name → the owner's reason, for lines hardware.release took back (the audit names it) */
  released?: ReadonlyMap<string, string>;
  hardware: Pick<Hardware, 'lines' | 'writeRateLimit'>;
  now?: () => number;
}

export interface ReadResult {
  line: string;
  value: Level;
  direction: 'input' | 'output';
  /** pinclaw keeps holding the line (an output it drives, or a watched input) */
  held: boolean;
}

export interface WriteResult {
  line: string;
  before: Level | null;
  after: Level;
  /** the line is reserved by the board profile and the owner released it: their reason */
  released?: string;
}

type EdgeListener = (err: Error | null, events: EdgeEvent[]) => void;

interface Held {
  resolved: ResolvedLine;
  request: LineRequest;
  mode: 'output' | 'input';
  edge: EdgeSetting;
  listeners: Set<EdgeListener>;
  watching: boolean;
}

export interface EdgeWatch {
  close(): void;
}

export interface GpioService {
  readonly backend: GpioBackend;
  readonly resolver: Resolver;
  resolve(spec: string): ResolvedLine;
  read(spec: string): ReadResult;
  write(spec: string, value: Level): WriteResult;
  /** Edges of a line as they come, until close(); the line is shared by every watcher. */
  watchEdges(spec: string, edge: Exclude<EdgeSetting, 'none'>, listener: EdgeListener, debounceUs?: number): EdgeWatch;
  /** Waits up to ms for edges and returns them (gpio_watch). */
  collectEdges(spec: string, edge: Exclude<EdgeSetting, 'none'>, ms: number, signal?: AbortSignal, max?: number): Promise<EdgeEvent[]>;
  /**
   * Requests every hardware.lines output with its `initial` value (default inactive), so a relay is
   * in a known state from the gateway's start instead of whatever the pin was. Returns the problems,
   * one per line that could not be claimed; the others are claimed regardless.
   */
  claimOutputs(): string[];
  /** Lines held now, for board_info and status. */
  held(): { line: string; mode: 'output' | 'input'; watchers: number }[];
  /** Releases every line (the gateway's shutdown; the kernel also does it when the process ends). */
  close(): void;
}

const key = (r: ResolvedLine) => `${r.path}:${r.offset}`;

export function createGpioService(o: GpioServiceOptions): GpioService {
  const named: readonly NamedLine[] = o.hardware.lines;
  const resolver = createResolver(o.backend, o.board, named);
  const now = o.now ?? Date.now;
  const held = new Map<string, Held>();
  const limit = createWriteLimiter({ ...o.hardware.writeRateLimit, noun: 'line', now });

  function checkReserved(r: ResolvedLine, action: string): void {
    const name = r.boardLine?.name;
    const why = name ? o.reserved?.get(name) : undefined;
    if (why) {
      const release = JSON.stringify([{ line: name, reason: '...' }]);
      throw new GpioError(
        `${action} ${r.display} refused: reserved on board ${o.board!.id}: ${why}. Rule: a reserved line stays untouched unless pinclaw can show it is free; pick another line, or turn off what uses it (the serial console, the bus), or if nothing is wired to it, release it: pinclaw config set hardware.release '${release}'`,
        { code: 'ERESERVED', device: r.display },
      );
    }
  }

  function checkRate(r: ResolvedLine): void {
    const refused = limit(key(r));
    if (refused) throw new GpioError(`write to ${r.display} refused: ${refused}`, { code: 'ERATE', device: r.display });
  }

  const baseConfig = (r: ResolvedLine): Pick<LineConfig, 'activeLow' | 'bias' | 'drive'> => ({
    activeLow: r.named?.activeLow ?? false,
    ...(r.named?.bias && r.named.bias !== 'as-is' ? { bias: r.named.bias } : {}),
    ...(r.named?.drive && r.named.drive !== 'push-pull' ? { drive: r.named.drive } : {}),
  });

  function release(h: Held): void {
    held.delete(key(h.resolved));
    h.request.release();
  }

  return {
    backend: o.backend,
    resolver,
    resolve: (spec) => resolver.resolve(spec),

    read(spec) {
      const r = resolver.resolve(spec);
      checkReserved(r, 'read of');
      const h = held.get(key(r));
      if (h) return { line: r.display, value: h.request.read(), direction: h.mode, held: true };
      // As-is: a read must not change the line's direction while it runs.
      const req = o.backend.request(r.path, r.offset, { direction: 'as-is', activeLow: baseConfig(r).activeLow }, CONSUMER, r.display);
      try {
        const value = req.read();
        const info = o.backend.lineInfo(r.path, r.offset);
        return { line: r.display, value, direction: info.direction, held: false };
      } finally {
        req.release();
      }
    },

    write(spec, value) {
      const r = resolver.resolve(spec);
      checkReserved(r, 'write to');
      const caps = r.boardLine?.capabilities;
      if (caps && !caps.includes('output')) throw new GpioError(`write to ${r.display} refused: board ${o.board!.id} says this line cannot be an output (it can: ${caps.join(', ')})`, { code: 'EDIRECTION', device: r.display });
      if (r.named?.direction === 'input') throw new GpioError(`write to ${r.display} refused: hardware.lines declares ${r.named.name} an input`, { code: 'EDIRECTION', device: r.display });
      let h = held.get(key(r));
      if (h && h.mode === 'input') throw new GpioError(`write to ${r.display} refused: pinclaw watches it as an input (${h.listeners.size} watcher${h.listeners.size === 1 ? '' : 's'}: a trigger or gpio_watch)`, { code: 'EDIRECTION', device: r.display });
      checkRate(r);
      let before: Level | null;
      if (h) {
        before = h.request.read();
        h.request.write(value);
      } else {
        // Held as-is first, so the value before the write is read without changing the line, then
        // made an output with the new value in one step (no glitch through the old level).
        const request = o.backend.request(r.path, r.offset, { direction: 'as-is', activeLow: baseConfig(r).activeLow }, CONSUMER, r.display);
        try {
          before = request.read();
          request.reconfigure({ direction: 'output', ...baseConfig(r), initial: value });
        } catch (err) {
          request.release();
          throw err;
        }
        h = { resolved: r, request, mode: 'output', edge: 'none', listeners: new Set(), watching: false };
        held.set(key(r), h);
      }
      const released = r.boardLine ? o.released?.get(r.boardLine.name) : undefined;
      return { line: r.display, before, after: h.request.read(), ...(released !== undefined ? { released } : {}) };
    },

    watchEdges(spec, edge, listener, debounceUs) {
      const r = resolver.resolve(spec);
      checkReserved(r, 'watching');
      if (r.boardLine && !r.boardLine.capabilities.includes('input')) throw new GpioError(`watching ${r.display} refused: board ${o.board!.id} says it cannot be an input`, { code: 'EDIRECTION', device: r.display });
      let h = held.get(key(r));
      if (h?.mode === 'output') throw new GpioError(`watching ${r.display} refused: pinclaw drives it as an output (set by gpio_write)`, { code: 'EDIRECTION', device: r.display });
      if (!h) {
        const request = o.backend.request(r.path, r.offset, { direction: 'input', ...baseConfig(r), edge: 'both', ...(debounceUs ? { debounceUs } : {}) }, CONSUMER, r.display);
        h = { resolved: r, request, mode: 'input', edge: 'both', listeners: new Set(), watching: false };
        held.set(key(r), h);
      }
      const line = h;
      // Filtered per listener: the line is requested with both edges, so watchers of either kind share it.
      const own: EdgeListener = (err, events) => listener(err, edge === 'both' ? events : events.filter((e) => e.edge === edge));
      line.listeners.add(own);
      if (!line.watching) {
        line.watching = true;
        line.request.watch((err, events) => {
          for (const l of [...line.listeners]) {
            try {
              l(err, events);
            } catch {
              // one listener's failure is its own; the others still hear the edge
            }
          }
        });
      }
      let closed = false;
      return {
        close() {
          if (closed) return;
          closed = true;
          line.listeners.delete(own);
          if (line.listeners.size === 0 && held.get(key(line.resolved)) === line) release(line);
        },
      };
    },

    collectEdges(spec, edge, ms, signal, max = 1000) {
      return new Promise((resolve, reject) => {
        const events: EdgeEvent[] = [];
        let w: EdgeWatch | undefined;
        const finish = () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', finish);
          w?.close();
          resolve(events);
        };
        const timer = setTimeout(finish, ms);
        try {
          w = this.watchEdges(spec, edge, (err, batch) => {
            if (err) {
              clearTimeout(timer);
              w?.close();
              reject(err);
              return;
            }
            events.push(...batch);
            if (events.length >= max) finish();
          });
        } catch (err) {
          clearTimeout(timer);
          reject(err);
          return;
        }
        if (signal?.aborted) finish();
        else signal?.addEventListener('abort', finish, { once: true });
      });
    },

    claimOutputs() {
      const problems: string[] = [];
      for (const n of named) {
        if (n.direction !== 'output' || !n.name) continue;
        try {
          const r = resolver.resolve(n.name);
          checkReserved(r, 'claiming');
          if (held.has(key(r))) continue;
          const request = o.backend.request(r.path, r.offset, { direction: 'output', ...baseConfig(r), initial: n.initial === 'active' ? 1 : 0 }, CONSUMER, r.display);
          held.set(key(r), { resolved: r, request, mode: 'output', edge: 'none', listeners: new Set(), watching: false });
        } catch (err) {
          problems.push(`hardware.lines ${n.name}: ${err instanceof Error ? err.message : String(err)}`);
        }
      }
      return problems;
    },

    held: () => [...held.values()].map((h) => ({ line: h.resolved.display, mode: h.mode, watchers: h.listeners.size })),

    close() {
      for (const h of [...held.values()]) {
        try {
          release(h);
        } catch {
          // releasing is closing an fd; nothing more to do if it fails
        }
      }
    },
  };
}
