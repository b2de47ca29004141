// What the hardware of this process offers Home Assistant: named lines, boards on serial ports and
// sensors, each with the few functions discovery and states need. Types only: the hardware runtime
// (src/setup/hardware.ts) builds them, src/fleet/home-assistant.ts uses them, and neither
// imports the other.
import type { ToolCall } from '../tools/types.js';

/** A logical level: 1 is "active" (on), after activeLow, as gpio_write and gpio_read count. */
export type Level = 0 | 1;

export interface HaLine {
  /** the hardware.lines name (garage_relay) */
  name: string;
  direction: 'input' | 'output';
  /** where the line is, for people: "GPIO17", "bench:D13" */
  target: string;
  /** the hardware.devices board the line is on; undefined for a line of this machine's GPIO chip */
  device?: string;
  /** The line's logical level now (activeLow applied). */
  read(): Promise<Level>;
  /**
   * Calls onChange with the logical level on every change, until the returned stop; absent when the
   * line cannot report changes (then it is read at the state interval). May throw when the line
   * cannot be watched after all (busy, no edge detection): the caller falls back to reading.
   */
  watch?(onChange: (value: Level) => void): () => void;
  /**
   * The tool call that sets an output to a logical level, run through the tool registry so a command
   * from Home Assistant passes the same policy, rate limit, confirmation and audit as the model's.
   * Only outputs have it.
   */
  setCall?(value: Level): ToolCall;
}

export interface HaDevice {
  /** the hardware.devices name (bench) */
  name: string;
  /** its connection with the firmware's hello done */
  connected(): boolean;
}

export interface HaSensor {
  /** the hardware.sensors name (shed_temperature) */
  name: string;
  /** unit_of_measurement (°C, %, V); undefined: a plain number */
  unit?: string;
  /** Home Assistant's sensor device class (temperature, humidity, voltage, ...) */
  deviceClass?: string;
  /** the hardware.devices board it is read from (an ADC pin); undefined for an I2C sensor */
  device?: string;
  /** how often its state is published; undefined: mqtt.homeAssistant.stateIntervalSeconds */
  intervalMs?: number;
  /** the value with scale and offset applied */
  read(): Promise<number>;
}

export interface HaEntities {
  lines: HaLine[];
  devices: HaDevice[];
  sensors: HaSensor[];
  /** the board profile in use, for the device's model ("rpi-4b"); undefined when none is known */
  board?: string;
}

