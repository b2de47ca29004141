// `pinclaw __gpio-bench --out LINE --in LINE [--n N] [--edges M]` (hidden): the measurements of
// bench/gpio, run where the lines are (the raspi3b VM with the loopback chip: OUT drives IN).
//   ioctl:  a bare loop of the addon's set/get values on one requested line (the baseline)
//   tools:  gpio_write / gpio_read through the whole tool layer (registry: policy, validation,
//           audit row in SQLite), per call
//   edges:  OUT toggled, IN's edge timed from the kernel's timestamp (CLOCK_MONOTONIC, the clock of
//           process.hrtime) to (a) the addon's callback in JavaScript, and (b) the trigger's row
//           committed in the durable queue through the trigger runner and the real SQLite store.
// Prints one JSON object. The config's writeRateLimit must allow the loop (bench/gpio.mjs sets it).
import { UsageError } from '../errors.js';
import { enqueue } from '../store/queue.js';
import { gpioAddon } from '../hardware/gpio/native.js';
import { startTriggers } from '../hardware/triggers/runner.js';
import { parseCommandArgs } from './args.js';
import { gpioBenchOptions } from './options.js';
import type { CliContext } from './context.js';
import { openToolProcess } from '../setup/tool-process.js';

const USAGE = 'pinclaw __gpio-bench --out LINE --in LINE [--n N] [--edges M]';

function stats(samples: number[]): { median: number; p90: number; min: number; max: number; n: number } {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? NaN;
  return { median: at(0.5), p90: at(0.9), min: s[0] ?? NaN, max: s.at(-1) ?? NaN, n: s.length };
}

const nowUs = () => Number(process.hrtime.bigint()) / 1000;

/** Resolves when `check` returns true, polling the event loop (edges arrive as callbacks). */
function until(check: () => boolean, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const end = Date.now() + ms;
    const tick = () => (check() ? resolve(true) : Date.now() > end ? resolve(false) : setImmediate(tick));
    tick();
  });
}

export async function runGpioBench(args: string[], ctx: CliContext): Promise<number> {
  const { values } = parseCommandArgs(args, gpioBenchOptions, USAGE);
  if (!values.out || !values.in) throw new UsageError(`usage: ${USAGE}`);
  const n = Number(values.n ?? 200);
  const edgeCount = Number(values.edges ?? 40);
  const tp = await openToolProcess(ctx);
  const { config, db, hardware, registry } = tp;
  const addon = gpioAddon();
  const gpio = hardware.gpio;
  if (!addon || !gpio) {
    tp.close();
    throw new Error(!addon ? 'the addon has no GPIO' : 'no GPIO on this machine');
  }
  const outLine = gpio.resolve(values.out);
  const inLine = gpio.resolve(values.in);
  const result: Record<string, unknown> = { backend: gpio.backend.name, out: outLine.display, in: inLine.display };
  try {
    // The baseline: bare ioctls from JavaScript, no pinclaw code between.
    const fd = addon.gpioRequest(outLine.path, [outLine.offset], { direction: 'output' }, 'bench');
    let t0 = nowUs();
    for (let i = 0; i < n; i++) addon.gpioSetValues(fd, 1, i & 1);
    const setUs = (nowUs() - t0) / n;
    t0 = nowUs();
    for (let i = 0; i < n; i++) addon.gpioGetValues(fd, 1);
    const getUs = (nowUs() - t0) / n;
    addon.gpioRelease(fd);
    result.ioctl = { writeUs: setUs, readUs: getUs, writesPerSecond: 1e6 / setUs, readsPerSecond: 1e6 / getUs };

    // The same through the tool layer: registry, policy, schema, audit rows, the GPIO service.
    const toolCtx = { sessionKey: 'bench', channel: 'cli', chatId: 'local', caller: 'owner' };
    const call = async (name: string, input: unknown) => {
      const r = await registry.call({ name, input }, toolCtx);
      if (r.result.isError) throw new Error(`${name}: ${r.result.content}`);
    };
    await call('gpio_write', { line: values.out, value: 0 });
    t0 = nowUs();
    for (let i = 0; i < n; i++) await call('gpio_write', { line: values.out, value: i & 1 });
    const toolWriteUs = (nowUs() - t0) / n;
    t0 = nowUs();
    for (let i = 0; i < n; i++) await call('gpio_read', { line: values.out });
    const toolReadUs = (nowUs() - t0) / n;
    result.tools = { writeUs: toolWriteUs, readUs: toolReadUs, writesPerSecond: 1e6 / toolWriteUs, readsPerSecond: 1e6 / toolReadUs, writeRatio: toolWriteUs / setUs, readRatio: toolReadUs / getUs };

    // Edges: OUT toggled through the held request (the same as gpio_write), IN watched.
    const toggle = (v: 0 | 1) => gpio.write(values.out!, v);
    const bare: number[] = [];
    const inFd = addon.gpioRequest(inLine.path, [inLine.offset], { direction: 'input', edge: 'both' }, 'bench');
    addon.gpioWatch(inFd, (err, events) => {
      const at = process.hrtime.bigint();
      if (!err) for (const e of events) bare.push(Number(at - e.timestampNs) / 1000);
    });
    for (let i = 0; i < edgeCount; i++) {
      toggle(((i + 1) & 1) as 0 | 1);
      await until(() => bare.length > i, 2000);
    }
    addon.gpioRelease(inFd);

    const queued: number[] = [];
    const triggerLine = config.hardware.triggers[0]?.line;
    if (!triggerLine) throw new Error('the bench config needs one hardware.triggers entry on the input line');
    const runner = startTriggers({
      triggers: config.hardware.triggers,
      sensorTriggers: [],
      watchEdges: (line, onEdge, onError) =>
        gpio.watchEdges(line, 'both', (err, events) => {
          if (err) return onError(err);
          for (const e of events) onEdge({ edge: e.edge, timestampNs: e.timestampNs, value: e.edge === 'rising' ? 1 : 0, seqno: e.lineSeqno });
        }),
      readSensor: async () => 0,
      knownChannels: ['hardware'],
      submit: (m) => {
        const row = enqueue(db, m, 0);
        const ts = (m.meta as { trigger?: { timestampNs?: string } } | undefined)?.trigger?.timestampNs;
        if (ts) queued.push(Number(process.hrtime.bigint() - BigInt(ts)) / 1000);
        return row;
      },
    });
    for (let i = 0; i < edgeCount; i++) {
      toggle(((i + 1) & 1) as 0 | 1);
      await until(() => queued.length > i, 2000);
    }
    runner.stop();
    result.edges = { callbackUs: stats(bare), queuedRowUs: stats(queued), ratio: stats(queued).median / stats(bare).median };
  } finally {
    tp.close();
  }
  ctx.out(JSON.stringify(result));
  return 0;
}
