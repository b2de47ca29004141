// Whether this process has any hardware to care about, answered from a few directory listings and
// without loading the board profiles: validating them costs a gateway several MiB of memory (the
// checks are compiled and the allocator keeps the pages), which a laptop, a container or CI should
// not pay for nothing.
import { existsSync } from 'node:fs';
import type { PinclawConfig } from '../config/schema.js';
import type { Paths } from '../paths.js';
import { readDeviceTreeModel } from './boards/detect.js';
import { HOST_ROOTS, type HostRoots } from './boards/host-roots.js';
import { userBoardsDir } from './boards/registry.js';
import { usbSerialPorts } from './boards/usb-serial.js';
import { listChips } from './gpio/native.js';
import { busNumbers } from './i2c/buses.js';

/** What there is, or undefined when there is nothing: no config, no device tree, no device. */
export function hardwarePresence(config: PinclawConfig, paths: Pick<Paths, 'home'>, roots: HostRoots = HOST_ROOTS): string | undefined {
  const hw = config.hardware;
  if (config.board.profile !== undefined) return 'board.profile is set';
  if (hw.lines.length || hw.triggers.length || hw.sensorTriggers.length || hw.confirm.length || hw.maixcam.port !== undefined || hw.devices.length || hw.sensors.length || hw.cameras.length) return 'the hardware section is configured';
  if (readDeviceTreeModel(roots) !== null) return 'the machine has a device tree';
  if (listChips(roots.dev).length) return 'a GPIO chip exists';
  if (busNumbers(roots.dev).length) return 'an I2C bus exists';
  if (usbSerialPorts(roots).length) return 'a USB serial port exists';
  if (existsSync(userBoardsDir(paths))) return 'board profiles of your own exist';
  return undefined;
}

export const NO_HARDWARE =
  'No hardware: this machine has no device tree, no GPIO chip, no I2C bus and no USB serial port, board.profile is not set and the hardware section is empty. `pinclaw board detect` says more.';
