// backend "none": no confinement at all, only the timeout and the process-group kill. Chosen only
// when sandbox.backend says so; auto never falls back to it.
import { superviseSpawn } from './supervise.js';
import type { BackendExit, PreparedRun } from './types.js';

export async function runUnconfined(run: PreparedRun): Promise<BackendExit> {
  const exit = await superviseSpawn('/bin/sh', ['-c', run.command], run);
  return {
    ...exit,
    enforcement: {
      backend: 'none',
      network: 'allowed',
      processLimit: 'not enforced',
      summary: ['none: no sandbox (sandbox.backend = none); the command can do whatever pinclaw can', 'timeout: process group killed'],
      detail: {},
    },
  };
}
