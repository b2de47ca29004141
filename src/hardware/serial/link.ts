// Opens a SerialLink for either kind of port: a local tty through the serialport packages, or a
// socket:// URL over TCP. Callers see one interface and one set of error kinds.
import { toSerialAddress } from './address.js';
import { openDeviceLink } from './link-device.js';
import { openSocketLink } from './link-socket.js';
import type { SerialAddress, SerialLink, SerialLinkOptions } from './types.js';

export type { SerialLink, SerialLinkOptions } from './types.js';

/** Opens a port once; throws a SerialError naming the device and what to do about it. */
export async function openSerialLink(port: string | SerialAddress, options: SerialLinkOptions = {}): Promise<SerialLink> {
  const address = toSerialAddress(port);
  return address.kind === 'device' ? openDeviceLink(address, options) : openSocketLink(address, options);
}
