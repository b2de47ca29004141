// Errors that carry the process exit code of the command-line contract, so every command
// can throw and the CLI entry alone decides how to print and exit.
export const EXIT = { ok: 0, failure: 1, usage: 2, config: 78 } as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

export class PinclawError extends Error {
  readonly exitCode: ExitCode;
  constructor(message: string, exitCode: ExitCode = EXIT.failure) {
    super(message);
    this.name = 'PinclawError';
    this.exitCode = exitCode;
  }
}

export class UsageError extends PinclawError {
  constructor(message: string) {
    super(message, EXIT.usage);
    this.name = 'UsageError';
  }
}

export class ConfigError extends PinclawError {
  constructor(message: string) {
    super(message, EXIT.config);
    this.name = 'ConfigError';
  }
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
