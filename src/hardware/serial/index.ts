// The serial layer: port addresses, links (a tty through the serialport packages, or socket://
// over TCP), managed devices that reconnect, open failures in words, and the ports this machine has.
export type { DeviceAddress, SerialAddress, SerialDeviceState, SerialDeviceStatus, SerialLink, SerialLinkOptions, SerialStateChange, SocketAddress } from './types.js';
export { ACCEPTED_FORMS, parseSerialAddress, toSerialAddress } from './address.js';
export { isRetryable, SerialError, type SerialErrorKind } from './errors.js';
export { findHolders, type PortHolder } from './holders.js';
export { describePorts, listSerialPorts, type SerialPortInfo } from './list.js';
export { openSerialLink } from './link.js';
export { openSerialDevice, type SerialDevice, type SerialDeviceOptions } from './device.js';
export { backoffDelay, type BackoffOptions } from './backoff.js';
export { portOwner } from './owners.js';
