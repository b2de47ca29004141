// GPIO failures as the person at the board needs to read them: which line or chip, why, and what to
// do (the group to join, who holds the line). Both backends throw these.
export interface GpioErrorInfo {
  /** errno name (EBUSY) or a pinclaw code (ELINE: no such line, ERESERVED, ERATE, EDIRECTION) */
  code: string;
  /** the device involved: /dev/gpiochip0, or a line as the user named it */
  device: string;
}

export class GpioError extends Error {
  readonly code: string;
  readonly device: string;
  constructor(message: string, info: GpioErrorInfo, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'GpioError';
    this.code = info.code;
    this.device = info.device;
  }
}

/** The group that owns a device file, for "join the group" advice; undefined when it cannot be read. */
export type GroupOf = (path: string) => string | undefined;

/**
 * An errno from opening or driving a line, in words. `line` names the line as the caller said it
 * ("GPIO17 (gpiochip0:17)"), `holder` is the consumer the kernel reports for a busy line.
 */
export function describeErrno(code: string, where: { chip: string; line?: string; holder?: string; group?: string }, detail: string): string {
  const what = where.line ? `line ${where.line}` : where.chip;
  switch (code) {
    case 'EACCES':
    case 'EPERM':
      return `permission denied on ${where.chip}: ${where.group ? `add this user to the '${where.group}' group (sudo usermod -aG ${where.group} $USER, then log in again)` : 'run pinclaw as a user that may open it (usually the gpio group)'}`;
    case 'EBUSY':
      return `${what} is busy: ${where.holder ? `held by '${where.holder}'` : 'held by a kernel driver or another process'}; free it there first`;
    case 'ENOENT':
    case 'ENODEV':
    case 'ENXIO':
      return `${where.chip} does not exist (or was unplugged)`;
    case 'EINVAL':
      return `${what}: the kernel refused the request (${detail})`;
    case 'ENOTTY':
      return `${where.chip} does not speak the GPIO character device uAPI v2 (kernel older than 5.10?)`;
    default:
      return `${what}: ${detail}`;
  }
}
