// What pinclaw asks of a GPIO line, whichever code talks to the kernel: the addon's uAPI v2 ioctls
// (native.ts) or, where the kernel has no uAPI v2, the deprecated sysfs interface (sysfs.ts). The
// shapes mirror the addon's, so the two backends are interchangeable and testable against each other.

export type Direction = 'as-is' | 'input' | 'output';
export type Bias = 'as-is' | 'pull-up' | 'pull-down' | 'disabled';
export type Drive = 'push-pull' | 'open-drain' | 'open-source';
export type EdgeSetting = 'none' | 'rising' | 'falling' | 'both';
export type Level = 0 | 1;

export interface LineConfig {
  direction: Direction;
  activeLow?: boolean;
  bias?: Bias;
  drive?: Drive;
  edge?: EdgeSetting;
  /** kernel debounce, microseconds (not every controller has it; EdgeFilter debounces in software too) */
  debounceUs?: number;
  /** an output's first value (logical, after activeLow) */
  initial?: Level;
}

export interface ChipInfo {
  /** gpiochip0 */
  name: string;
  /** pinctrl-bcm2835 */
  label: string;
  lines: number;
}

export interface LineInfo {
  offset: number;
  /** the kernel's name for the line (device tree gpio-line-names); '' when it has none */
  name: string;
  /** who holds the line ('' when free or unknown) */
  consumer: string;
  used: boolean;
  direction: 'input' | 'output';
  activeLow: boolean;
  bias: Bias;
  drive: Drive;
  edge: EdgeSetting;
  debounceUs: number;
}

/** One edge as the kernel reported it. timestampNs is CLOCK_MONOTONIC (process.hrtime.bigint()'s clock). */
export interface EdgeEvent {
  offset: number;
  edge: 'rising' | 'falling';
  timestampNs: bigint;
  seqno: number;
  lineSeqno: number;
}

/** One requested line, held until release(). Values are logical (after activeLow). */
export interface LineRequest {
  read(): Level;
  write(value: Level): void;
  reconfigure(config: LineConfig): void;
  /** Edges as they arrive; at most one watcher per request. */
  watch(onEvents: (err: Error | null, events: EdgeEvent[]) => void): void;
  release(): void;
}

export interface GpioBackend {
  readonly name: 'native' | 'sysfs';
  /** /dev/gpiochip* paths, sorted by number */
  chips(): string[];
  chipInfo(path: string): ChipInfo;
  lineInfo(path: string, offset: number): LineInfo;
  /** `label` names the line in errors ("GPIO17 (gpiochip0:17)"); default path:offset */
  request(path: string, offset: number, config: LineConfig, consumer: string, label?: string): LineRequest;
}
