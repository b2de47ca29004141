// The command a stranger is told to pass to the owner. When the gateway's home is not the default
// one (~/.pinclaw), a bare `pinclaw pairing approve CODE` in the owner's shell would look in the
// wrong database and answer "no such code": the hint names the home then.
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

/** The shell word for `s`: as it is when it needs no quoting, else in single quotes. */
function shellWord(s: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** `pinclaw [--home DIR] pairing approve CODE` for a gateway whose home is `home`. */
export function approveCommand(code: string, home: string | undefined, defaultHome = join(homedir(), '.pinclaw')): string {
  const away = home !== undefined && resolve(home) !== resolve(defaultHome);
  return `pinclaw ${away ? `--home ${shellWord(resolve(home))} ` : ''}pairing approve ${code}`;
}
