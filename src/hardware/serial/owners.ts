// One owner per port within the process: two devices reading one port would each get half of the
// bytes. A port is known by every name it has here: the path as given, the device file a by-id link
// resolves to (so /dev/serial/by-id/x and /dev/ttyACM0 are the same port), or host:port.
import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import { lead, SerialError } from './errors.js';
import type { SerialAddress } from './types.js';

interface Owner {
  name: string;
  port: string;
}

const owners = new Map<string, Owner>();

/** The names a port is known by right now. */
export function portKeys(address: SerialAddress): string[] {
  if (address.kind === 'socket') return [`socket:${address.host.toLowerCase()}:${address.port}`];
  const keys = [`path:${resolve(address.path)}`];
  try {
    keys.push(`path:${realpathSync(address.path)}`);
  } catch {
    // not there yet: the given path is the only name until it appears
  }
  return [...new Set(keys)];
}

export interface PortClaim {
  readonly name: string;
  /** Adds the port's current names (a by-id link may point elsewhere after a replug); throws 'owned'. */
  refresh(): void;
  release(): void;
}

function conflict(name: string, address: SerialAddress, owner: Owner): SerialError {
  const as = owner.port === address.text ? '' : ` (opened as ${owner.port})`;
  return new SerialError('owned', `${lead({ name, address })}${address.text} is already in use by device ${owner.name} in this process${as}; a port has one owner`, { port: address.text, device: name });
}

/** Takes the port for `name`, or throws a SerialError of kind 'owned' naming the owner. */
export function claimPort(name: string, address: SerialAddress): PortClaim {
  const me: Owner = { name, port: address.text };
  const mine = new Set<string>();
  const take = () => {
    const keys = portKeys(address);
    for (const k of keys) {
      const o = owners.get(k);
      if (o && o !== me) throw conflict(name, address, o);
    }
    for (const k of keys) {
      owners.set(k, me);
      mine.add(k);
    }
  };
  take();
  let released = false;
  return {
    name,
    refresh: () => {
      if (!released) take();
    },
    release: () => {
      if (released) return;
      released = true;
      for (const k of mine) if (owners.get(k) === me) owners.delete(k);
      mine.clear();
    },
  };
}

/** Which device of this process owns the port, if any. */
export function portOwner(address: SerialAddress): string | null {
  for (const k of portKeys(address)) {
    const o = owners.get(k);
    if (o) return o.name;
  }
  return null;
}
