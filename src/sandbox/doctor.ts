// doctor's 'sandbox' check: which backend exec would use with this config on this host, what it
// enforces, and what the kernel leaves out.
import { defaults } from '../config/schema.js';
import { chooseBackend, detectSandbox, type SandboxSupport } from './detect.js';
import type { SandboxSettings } from './types.js';

export interface SandboxCheck {
  name: 'sandbox';
  state: 'ok' | 'warn' | 'fail';
  detail: string;
}

/** How the process count will be bounded (the same choice as needsPidsCgroup), without running a command. */
export function processLimitOutlook(s: SandboxSupport, uid = process.getuid?.() ?? 0): { bounded: boolean; how: string } {
  if (uid !== 0 && s.userNamespaces.available) return { bounded: true, how: "RLIMIT_NPROC in the sandbox's own user namespace" };
  if (s.pidsCgroup) return { bounded: true, how: `pids cgroup (v${s.pidsCgroup.version}, ${s.pidsCgroup.dir})` };
  if (uid === 0) return { bounded: false, how: 'not bounded: the kernel never applies RLIMIT_NPROC to root, and no writable pids cgroup' };
  return { bounded: true, how: `RLIMIT_NPROC across all processes of uid ${uid} (no user namespaces: ${s.userNamespaces.reason})` };
}

function landlockGaps(abi: number): string[] {
  const gaps: string[] = [];
  if (abi < 2) gaps.push('no file reparenting control (ABI < 2)');
  if (abi < 3) gaps.push('truncate not controlled (ABI < 3)');
  if (abi < 4) gaps.push('TCP not filtered by Landlock (ABI < 4; seccomp still refuses sockets)');
  if (abi < 6) gaps.push('signals and abstract unix sockets not scoped (ABI < 6): a command could signal pinclaw');
  return gaps;
}

export async function sandboxCheck(settings: SandboxSettings = defaults().sandbox): Promise<SandboxCheck> {
  const s = await detectSandbox();
  const choice = chooseBackend(settings.backend, s);
  const bwrap = s.bubblewrap ? `bubblewrap ${s.bubblewrap.version} ${s.bubblewrap.usable ? 'works' : `does not work (${s.bubblewrap.reason})`}` : 'bubblewrap not installed';
  const landlock = s.landlock.abi >= 1 ? `Landlock ABI ${s.landlock.abi}` : `no Landlock (${s.landlock.reason})`;
  if ('error' in choice) return { name: 'sandbox', state: settings.backend === 'auto' ? 'warn' : 'fail', detail: `exec is refused: ${choice.error}; so exec is not in the standard tool profile (it is offered only inside an OS sandbox)` };
  if (choice.backend === 'none') return { name: 'sandbox', state: 'warn', detail: `sandbox.backend = none: exec runs commands unconfined, so it is not in the standard tool profile (tools.allow opts in) (${landlock}; ${bwrap})` };

  const limit = processLimitOutlook(s);
  const network = settings.network ? 'network allowed' : 'network denied';
  const parts =
    choice.backend === 'landlock'
      ? [`landlock ABI ${s.landlock.abi} + seccomp + rlimits, ${network}`, `processes: ${limit.how}`, ...landlockGaps(s.landlock.abi), `fallback: ${bwrap}`]
      : [`bubblewrap ${choice.tools.version} (namespaces) + rlimits${choice.tools.prlimit ? '' : ' NOT APPLIED (prlimit missing)'}, ${network}`, `processes: ${limit.how}`, `(${landlock})`];
  const state = limit.bounded && (choice.backend === 'landlock' || choice.tools.prlimit) ? 'ok' : 'warn';
  parts.push('exec is in the standard tool profile');
  return { name: 'sandbox', state, detail: parts.join('; ') };
}
