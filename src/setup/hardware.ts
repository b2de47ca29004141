// The hardware part of a long-running process (gateway, agent): the board, the GPIO and I2C tools of
// this machine, the 'hardware' channel that trigger turns answer into, and the triggers themselves,
// started once the conductor runs. On a machine without hardware this is board_info and nothing else.
import type { PinclawConfig } from '../config/schema.js';
import type { ChannelAdapter, Conductor } from '../conductor/conductor.js';
import type { Hooks } from '../hooks/index.js';
import { gatedSubmit } from '../hooks/trigger-gate.js';
import { checkBoardConfig } from '../hardware/boards/config-check.js';
import type { GpioService } from '../hardware/gpio/service.js';
import { setupHardware } from '../hardware/setup.js';
import { startMcuDevices, type ManagedDevice } from '../hardware/mcu/devices.js';
import { mcuTools } from '../hardware/mcu/tools.js';
import { serialTools } from '../hardware/mcu/serial-tools.js';
import { resolvePin } from '../hardware/mcu/pins.js';
import type { McuEvent } from '../hardware/mcu/messages.js';
import { loadBoardRegistry, userBoardsDir } from '../hardware/boards/registry.js';
import type { TriggerEdge, TriggerRunner } from '../hardware/triggers/runner.js';
import { trackSensors, watchHealth, type HardwareProblem } from '../hardware/health.js';
import type { I2cBackend } from '../hardware/i2c/types.js';
import { startMaixcamServer, type MaixcamServer } from '../hardware/maixcam/server.js';
import { detectionTriggers } from '../hardware/maixcam/triggers.js';
import { cameraCommandTool } from '../hardware/maixcam/tool.js';
import { ConfigError, errorMessage } from '../errors.js';
import type { ReadingKind } from '../store/readings.js';
import { hardwarePresence, NO_HARDWARE } from '../hardware/presence.js';
import { boardInfoTool } from '../hardware/gpio/tools.js';
import { hardwareChannel } from '../hardware/triggers/hardware-channel.js';
import { startTriggers } from '../hardware/triggers/runner.js';
import { ownerTarget } from '../scheduler/targets.js';
import { busNumbers } from '../hardware/i2c/buses.js';
import { readDeviceTreeModel } from '../hardware/boards/detect.js';
import { HOST_ROOTS } from '../hardware/boards/host-roots.js';
import { createWriteLimiter } from '../hardware/write-limit.js';
import { readFileSync } from 'node:fs';
import type { Tool } from '../tools/types.js';
import { log } from '../log.js';
import type { ProcessContext } from './context.js';
import type { HardwareSources } from '../fleet/hardware-entities.js';
import { checkSensorConfig } from '../hardware/sensors/config-check.js';
import type { SensorReader } from '../hardware/sensors/reader.js';

export interface HardwareRuntime {
  tools: Tool[];
  /** the GPIO service, when this machine has a GPIO chip */
  gpio?: GpioService;
  promptText?: string;
  channels: ChannelAdapter[];
  /**
   * The gateway's start: claims the declared outputs at their initial values and starts the
   * configured triggers; returns their stop. onHealth hears every change of health() from then on.
   */
  start(conductor: Conductor, knownChannels: readonly string[], onHealth?: (problems: HardwareProblem[]) => void, hooks?: Hooks): Promise<() => void>;
  /** What is failing now (triggers, sensors, devices); empty when healthy. */
  health(): HardwareProblem[];
  close(): void;
  /** The named lines, boards and sensors, for Home Assistant discovery (src/fleet/hardware-entities.ts). */
  haSources(): HardwareSources | undefined;
}

/** The adapter's name from sysfs ("bcm2835 (i2c@7e804000)"), or null; for the tools' "buses here" answer. */
function adapterNameSync(bus: number): string | null {
  try {
    return readFileSync(`/sys/class/i2c-dev/i2c-${bus}/name`, 'utf8').trim() || null;
  } catch {
    return null;
  }
}

/** How often the gateway reads every named sensor for the readings ring (the dashboard's 24-hour plot). */
export const SAMPLE_INTERVAL_MS = 5 * 60_000;

export interface HardwareRecording {
  /**
   * Told of every good sensor reading (sampled, sensor_read, Home Assistant), every value written to
   * a GPIO line and every edge of a triggered line: the gateway keeps them in the readings ring.
   * `name` is the hardware.sensors or hardware.lines name (src/store/readings.ts).
   */
  onReading(kind: ReadingKind, name: string, value: number): void;
}

export async function startHardware(config: PinclawConfig, ctx: ProcessContext, recording?: HardwareRecording): Promise<HardwareRuntime> {
  // Checked on every machine (it needs no board profile): a sensor that names nothing exits 78.
  checkSensorConfig(config.hardware, ctx.paths.config);
  if (hardwarePresence(config, ctx.paths) === undefined) {
    return { tools: [boardInfoTool(() => NO_HARDWARE)], channels: [], start: async () => () => {}, health: () => [], close: () => {}, haSources: () => undefined };
  }
  // A trigger or a named line that points nowhere is a config error (exit 78), found before start
  // and before any device is opened.
  checkBoardConfig(config, ctx.paths);
  const cam = config.hardware.maixcam;
  if (cam.port !== undefined && !cam.token) throw new ConfigError('hardware.maixcam.token: required when hardware.maixcam.port is set (each camera sends it in its hello)');
  // The I2C code is loaded only when a bus exists or a board may be here (a board with I2C and no bus
  // gets tools that say how to enable it): most machines have neither.
  const i2c = busNumbers().length || config.board.profile !== undefined || readDeviceTreeModel(HOST_ROOTS) !== null ? await Promise.all([import('../hardware/i2c/tools.js'), import('../hardware/i2c/index.js')]) : undefined;
  const i2cLimit = createWriteLimiter({ ...config.hardware.writeRateLimit, noun: 'device' });
  // One backend for the sensors and the sensor triggers, made on first use.
  let i2cShared: I2cBackend | undefined;
  const i2cForSensors = i2c ? () => (i2cShared ??= i2c[1].i2cBackend({ env: ctx.env })) : undefined;
  const hw = setupHardware({
    config,
    paths: ctx.paths,
    env: ctx.env,
    i2cTools: (buses) => {
      if (!i2c) return [];
      const [{ i2cTools }, { i2cBackend }] = i2c;
      let backend: ReturnType<typeof i2cBackend> | undefined;
      return i2cTools({
        backend: () => (backend ??= i2cBackend({ env: ctx.env })),
        // Read at each call: a bus that appears later (modprobe i2c-dev) is usable without a restart.
        buses: () => (buses.length ? buses : busNumbers()).map((bus) => ({ bus, path: `/dev/i2c-${bus}`, name: adapterNameSync(bus) })),
        writeLimiter: i2cLimit,
      });
    },
  });
  // Boards on serial ports: connected now (a CLI tool call needs them too), kept connected.
  const mcuEvents = new Set<(device: string, e: McuEvent) => void>();
  const mcuHellos = new Set<(device: string) => void>();
  const mcu = config.hardware.devices.length
    ? await startMcuDevices({
        devices: config.hardware.devices,
        registry: loadBoardRegistry({ userDir: userBoardsDir(ctx.paths) }),
        onEvent: (d, e) => mcuEvents.forEach((l) => l(d, e)),
        onHello: (d) => mcuHellos.forEach((l) => l(d)),
      })
    : undefined;
  if (mcu) {
    const pinLimit = createWriteLimiter({ ...config.hardware.writeRateLimit, noun: 'pin' });
    hw.tools.push(...mcuTools({ devices: () => mcu.devices, writeLimiter: pinLimit }), ...serialTools(() => mcu.devices));
  }
  /** A hardware.lines entry on a board of hardware.devices ("bench:D2"), as an MCU edge source. */
  const mcuLine = (lineName: string) => {
    const target = config.hardware.lines.find((l) => l.name === lineName)?.line;
    const m = target ? /^([^:]+):(.+)$/.exec(target) : null;
    const dev = m ? mcu?.devices.find((d) => d.name === m[1]) : undefined;
    return dev && m ? { dev, pin: m[2]! } : undefined;
  };
  // The sensors' reader and sensor_read are the lazy chunk 'sensors': loaded only when some are named.
  let sensors: SensorReader | undefined;
  /** sensor name → why its last read (a poll, sensor_read, Home Assistant's) failed; cleared by a good read */
  const sensorFailures = new Map<string, string>();
  let runner: TriggerRunner | undefined;
  if (config.hardware.sensors.length) {
    const [{ createSensorReader }, { sensorReadTool }] = await Promise.all([import('../hardware/sensors/reader.js'), import('../hardware/sensors/tool.js')]);
    sensors = trackSensors(createSensorReader({ sensors: config.hardware.sensors, i2c: i2cForSensors, devices: () => mcu?.devices ?? [] }), sensorFailures, recording && ((r) => recording.onReading('sensor', r.name, r.value)));
    hw.tools.push(sensorReadTool(sensors));
  }
  // camera_snapshot is the lazy chunk 'camera': loaded only when hardware.cameras names one.
  if (config.hardware.cameras.length) {
    const { startCameras } = await import('../hardware/camera/index.js');
    const board = hw.board && { id: hw.board.id, interfaces: hw.board.camera?.interfaces };
    hw.tools.push(...startCameras(config, { configPath: ctx.paths.config, workspace: ctx.paths.workspace, board }));
  }
  if (recording && hw.gpio) recordWrites(hw.gpio, recording);
  let camServer: MaixcamServer | undefined;
  if (cam.port !== undefined) hw.tools.push(cameraCommandTool(() => camServer));
  const triggersWanted = config.hardware.triggers.length + config.hardware.sensorTriggers.length + cam.triggers.length > 0;
  const health = (): HardwareProblem[] => {
    const problems: HardwareProblem[] = [];
    for (const s of runner?.status() ?? []) {
      const component = s.kind === 'gpio' ? `trigger '${s.name}'` : `sensor trigger ${s.name}`;
      if (s.state === 'failed' || s.state === 'read-failing') problems.push({ component, reason: s.lastError ?? 'not running' });
      else if (s.kind === 'gpio') {
        // A trigger on a board's pin watches nothing while its board is away (it re-arms on the hello).
        const dev = mcuLine(s.name)?.dev;
        if (dev && !deviceUp(dev.state())) problems.push({ component, reason: `its board ${dev.name} (${dev.port}) is not connected: ${steadyState(dev.state())}` });
      }
    }
    for (const [name, reason] of sensorFailures) problems.push({ component: `sensor '${name}'`, reason });
    for (const d of mcu?.devices ?? []) if (!deviceUp(d.state())) problems.push({ component: `device '${d.name}'`, reason: `${d.port}: ${steadyState(d.state())}` });
    return problems;
  };
  return {
    health,
    tools: hw.tools,
    gpio: hw.gpio,
    promptText: hw.promptText,
    channels: triggersWanted ? [hardwareChannel()] : [],
    async start(conductor, knownChannels, onHealth, hooks) {
      // Every trigger's message passes the HardwareTrigger hooks first (when there are any).
      const submit = gatedSubmit((m) => conductor.submit(m), hooks);
      // A board whose GPIO cannot be used is worth a line in the journal (doctor and tool list say it too).
      if (hw.board && hw.gpioUnavailable !== undefined) log.warn(`GPIO tools unavailable: ${hw.gpioUnavailable}`);
      for (const p of hw.gpio?.claimOutputs() ?? []) log.warn(p);
      const stops: (() => unknown)[] = [];
      if (cam.port !== undefined) {
        const onDetection = detectionTriggers({ triggers: cam.triggers, submit, knownChannels });
        camServer = await startMaixcamServer({ host: cam.host, port: cam.port, token: cam.token!, onDetection });
        log.info(`maixcam: listening on ${cam.host}:${camServer.port}`);
        const s = camServer;
        stops.push(() => s.close());
      }
      // The sampler feeds the plots of sensors nothing else reads (no trigger polls them). A failed
      // read is what health() reports already; a chain of timeouts, so a slow bus never overlaps itself.
      if (recording && sensors) {
        const reader = sensors;
        let timer: NodeJS.Timeout | undefined;
        let stopped = false;
        const sample = async () => {
          for (const name of reader.names()) if (!stopped) await reader.read(name).catch(() => {});
          if (!stopped) timer = setTimeout(() => void sample(), SAMPLE_INTERVAL_MS).unref();
        };
        timer = setTimeout(() => void sample(), 0).unref();
        stops.push(() => {
          stopped = true;
          clearTimeout(timer);
        });
      }
      const stopAll = () => stops.reverse().forEach((f) => f());
      // Watched once the triggers run, so the first look already sees one that could not start.
      const watched = () => {
        if (onHealth) stops.push(watchHealth(health, onHealth));
        return stopAll;
      };
      if (config.hardware.triggers.length + config.hardware.sensorTriggers.length === 0) return watched();
      const gpio = hw.gpio;
      runner = startTriggers({
        triggers: config.hardware.triggers,
        sensorTriggers: config.hardware.sensorTriggers,
        submit,
        knownChannels,
        owner: ownerTarget(config),
        notify: (m) => conductor.send(m),
        timezone: config.agent.timezone,
        watchEdges: (line, onEdge, onError) => {
          const onMcu = mcuLine(line);
          // adc is always there (its intervalMs has a default); a band makes it an analog trigger.
          const band = config.hardware.triggers.find((x) => x.line === line)?.adc;
          const adc = band && (band.low !== undefined || band.high !== undefined) ? band : undefined;
          if (onMcu) return watchMcuPin(onMcu.dev, onMcu.pin, adc, onEdge, onError, mcuEvents, mcuHellos);
          if (!gpio) throw new Error(`trigger on ${line}: ${hw.gpioDetail}`);
          // Both edges from the kernel: the runner's filter picks the kind, and every edge counts
          // for its debounce (a bounce is an edge of the other kind first).
          return gpio.watchEdges(line, 'both', (err, events) => {
            if (err) return onError(err);
            for (const e of events) {
              recording?.onReading('line', line, e.edge === 'rising' ? 1 : 0);
              onEdge({ edge: e.edge, timestampNs: e.timestampNs, value: e.edge === 'rising' ? 1 : 0, seqno: e.lineSeqno });
            }
          });
        },
        readSensor: async (s) => {
          if (!i2cForSensors) throw new Error(`no I2C bus on this machine (/dev/i2c-${s.bus} is missing)`);
          const bytes = await i2cForSensors().read(s.bus, s.address, { register: s.register, length: s.length });
          let v = 0;
          for (const b of bytes) v = v * 256 + b;
          return v;
        },
      });
      const started = runner;
      stops.push(() => started.stop());
      return watched();
    },
    close: () => {
      hw.close();
      void mcu?.close();
    },
    haSources: () => ({ config, gpio: hw.gpio, board: hw.board?.id, devices: mcu?.devices ?? [], sensors, mcuEvents, mcuHellos }),
  };
}

/**
 * Every write through the service (gpio_write, the dashboard's toggle through it) goes to the ring
 * under the line's hardware.lines name. In place, because the GPIO tools already hold this service.
 */
export function recordWrites(gpio: GpioService, recording: HardwareRecording): void {
  const write = gpio.write.bind(gpio);
  gpio.write = (spec, value) => {
    const w = write(spec, value);
    try {
      recording.onReading('line', gpio.resolve(spec).named?.name ?? spec, w.after);
    } catch (err) {
      // The line was written; a ring that cannot take the value must not turn that into a failure.
      log.once('readings-write', 'warn', `readings: cannot record a GPIO write: ${errorMessage(err)}`);
    }
    return w;
  };
}

/** A board on a serial port that works: open, and (an MCU) past its hello. */
function deviceUp(state: string): boolean {
  return state === 'open' || state === 'open, waiting for hello';
}

/** A device's state without its retry countdown: the same failure must read the same on every look. */
const steadyState = (state: string) => state.replace(/, next try in \d+ ms$/, '');

/**
 * An MCU pin as a trigger's edge source: the firmware is asked to watch the pin after every hello
 * (a board that reset forgot it), and its pin events become edges, timed by the board's clock. With
 * `adc`, the firmware watches the pin's readings instead, and a crossing above `high` is a rising
 * edge, below `low` a falling one: the same filter then judges them.
 */
function watchMcuPin(
  dev: ManagedDevice,
  pinSpec: string,
  adc: { low?: number; high?: number; intervalMs: number } | undefined,
  onEdge: (e: TriggerEdge) => void,
  onError: (err: Error) => void,
  events: Set<(device: string, e: McuEvent) => void>,
  hellos: Set<(device: string) => void>,
): { close(): void } {
  let pin: number | undefined;
  const arm = () => {
    const client = dev.client();
    if (!client) return;
    try {
      pin = resolvePin(dev.name, pinSpec, adc ? 'adc_watch' : 'watch', dev.profile(), dev.hello()).pin;
    } catch (err) {
      return onError(err as Error);
    }
    const armed = adc ? client.adcWatch(pin, adc.low ?? 0, adc.high ?? 65535, adc.intervalMs) : client.watch(pin, 'both');
    armed.catch((err: unknown) => onError(err as Error));
  };
  const onHello = (d: string) => {
    if (d === dev.name) arm();
  };
  const onEvent = (d: string, e: McuEvent) => {
    if (d !== dev.name || e.pin !== pin || e.kind !== (adc ? 'adc' : 'pin')) return;
    const up = e.kind === 'adc' ? e.above : e.value === 1;
    onEdge({ edge: up ? 'rising' : 'falling', timestampNs: BigInt(e.ms) * 1_000_000n, value: up ? 1 : 0, seqno: e.seq });
  };
  hellos.add(onHello);
  events.add(onEvent);
  arm();
  return {
    close() {
      hellos.delete(onHello);
      events.delete(onEvent);
      if (pin !== undefined) (adc ? dev.client()?.adcWatch(pin, 0, 0, 0) : dev.client()?.watch(pin, 'off'))?.catch(() => {});
    },
  };
}
