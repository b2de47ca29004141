// Every check of the configuration that the gateway and `pinclaw agent` run before they start, in
// one place: they call it, `config validate` reports it and `config set` refuses a change it would
// fail. A value the schema accepts but a process refuses (exit 78) would otherwise be written by
// `config set` and found only at the next restart, which under systemd becomes a restart loop.
// Here in setup/ because it reaches every layer (providers, tools, hardware, channels); the code
// an idle gateway never runs (tools, MQTT) is imported only when a check runs.
import { isLoopback } from '../channels/http/guard.js';
import { configFromRaw, plannedConfig, readConfigFile, type PinclawConfig } from '../config/index.js';
import { localFallback, missingProvider, modelRefs, resolveModels } from '../agent/providers/models.js';
import { ConfigError } from '../errors.js';
import { unknownZoneText } from '../time-zone-check.js';
import { checkBoardConfig, chosenCameraBoard } from '../hardware/boards/config-check.js';
import { checkSensorConfig } from '../hardware/sensors/config-check.js';
import type { Paths } from '../paths.js';
import { prepareScheduling } from '../scheduler/gateway.js';
import { ownerNotifyProblem } from '../scheduler/targets.js';

/** `host`: the address the gateway binds, when `--host` replaces gateway.host. */
type Where = { paths: Paths; env: NodeJS.ProcessEnv; host?: string };

/** The refusal of a gateway bound beyond this machine without a token (gateway.host or --host). */
export function bindProblem(host: string, token: string | undefined): string | undefined {
  if (isLoopback(host) || token) return undefined;
  return `refusing to listen on ${host} without gateway.token: anyone on the network could use the agent; set one (pinclaw config set gateway.token VALUE) or bind 127.0.0.1`;
}

/** One line of a refusal, with the check that gave it (for `config set`'s comparison). */
interface Problem {
  check: string;
  text: string;
}

/** Runs one check; a ConfigError becomes its lines, anything else is a bug and propagates. */
function collect(problems: Problem[], check: string, run: () => void): void {
  try {
    run();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    problems.push(...err.message.split('\n').map((text) => ({ check, text })));
  }
}

/**
 * Every problem the gateway or `pinclaw agent` would exit 78 for, one line each (empty: none). What
 * only the agent needs (a provider with credentials) is not here: the gateway runs without one, and
 * a first `config set` must work before the key is set; see providerNote.
 */
export async function configProblems(config: PinclawConfig, where: Where): Promise<string[]> {
  return [...new Set((await checkedProblems(config, where)).map((p) => p.text))];
}

async function checkedProblems(config: PinclawConfig, { paths, env, host }: Where): Promise<Problem[]> {
  const problems: Problem[] = [];
  collect(problems, 'models', () => modelRefs(config));
  // The base URLs of the providers (agent exits 78 on a bad one, the gateway at its first turn).
  collect(problems, 'providers', () => void resolveModels(config, env));
  collect(problems, 'local fallback', () => void localFallback(config));
  collect(problems, 'owner', () => {
    const owner = ownerNotifyProblem(config);
    if (owner) throw new ConfigError(owner);
  });
  collect(problems, 'scheduling', () => void prepareScheduling({ config, workspace: paths.workspace }));
  collect(problems, 'bind', () => {
    const bind = bindProblem(host ?? config.gateway.host, config.gateway.token);
    if (bind) throw new ConfigError(host === undefined ? `gateway.host: ${bind}` : bind);
  });
  collect(problems, 'timezone', () => {
    // Every turn formats the time in this zone: an unknown one would fail each of them.
    const zone = config.agent.timezone;
    const bad = zone === undefined ? undefined : unknownZoneText(zone);
    if (bad) throw new ConfigError(`agent.timezone: ${bad}`);
  });
  collect(problems, 'sensors', () => checkSensorConfig(config.hardware, paths.config));
  collect(problems, 'boards', () => checkBoardConfig(config, paths));
  // The camera chunk is loaded only when hardware.cameras names one, as the gateway loads it.
  if (config.hardware.cameras.length) {
    const { checkCameraConfig } = await import('../hardware/camera/index.js');
    collect(problems, 'cameras', () => checkCameraConfig(config.hardware.cameras, paths.config, chosenCameraBoard(config, paths)));
  }
  collect(problems, 'maixcam', () => {
    const cam = config.hardware.maixcam;
    if (cam.port !== undefined && !cam.token) throw new ConfigError('hardware.maixcam.token: required when hardware.maixcam.port is set (each camera sends it in its hello)');
  });
  // File roots, the search provider's settings and the policy are checked where the tools are built;
  // build them here too, without running any.
  const [{ builtinTools }, { createPolicy }] = await Promise.all([import('../tools/builtin.js'), import('../tools/policy.js')]);
  collect(problems, 'tools', () => void builtinTools({ config, paths, env }));
  collect(problems, 'policy', () => void createPolicy(config.tools));
  if (Object.keys(config.mcp.servers).length) {
    const { checkMcpConfig } = await import('../mcp/client/index.js');
    collect(problems, 'mcp', () => checkMcpConfig(config));
  }
  // Loads the update chunk only when update.* is set (the defaults need no check).
  if (config.update.url || config.update.check !== 'off' || config.update.publicKeys.length) {
    const { checkUpdateConfig } = await import('../update/config-check.js');
    collect(problems, 'update', () => checkUpdateConfig(config));
  }
  if (config.mqtt.url) {
    const { checkMqttConfig } = await import('../channels/mqtt/start.js');
    collect(problems, 'mqtt', () => checkMqttConfig(config));
  }
  return problems;
}

/** The gateway's and the agent's entry: a ConfigError (exit 78) listing every problem. */
export async function checkConfig(config: PinclawConfig, where: Where): Promise<void> {
  const problems = await configProblems(config, where);
  if (problems.length) throw new ConfigError(problems.join('\n'));
}

/** Why `pinclaw agent` would stop for want of a provider (it exits 78), or undefined. */
export function providerNote(config: PinclawConfig, env: NodeJS.ProcessEnv): string | undefined {
  try {
    return missingProvider(resolveModels(config, env));
  } catch {
    return undefined; // a bad model or base URL is among configProblems already
  }
}

/** The problems of a raw file content, as the processes would load it (environment, secrets). */
async function rawProblems(raw: Record<string, unknown>, where: Where): Promise<Problem[]> {
  let config: PinclawConfig;
  try {
    config = configFromRaw(raw, where.paths, where.env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return err.message.split('\n').map((text) => ({ check: 'schema', text }));
  }
  return checkedProblems(config, where);
}

/** A message's leading setting ("heartbeat.every: ..." or "FILE: files.roots[0]: ..."), or undefined. */
const KEY = /^(?:\S*: )?([A-Za-z_][\w-]*(?:\.[\w-]+|\[\d+\])+|[A-Za-z_][\w-]*): /;

/**
 * What makes a problem the same problem before and after a change: the check that found it, the
 * setting it names, and what it says with the values taken out ('1s', "x", 17). The message text
 * alone will not do: it carries the value, so a still-too-short heartbeat.every ('1s' then '2s')
 * would count as new; and a message that names no setting is known by the check and its words.
 */
function problemIdentity(p: Problem): string {
  const key = KEY.exec(p.text)?.[1] ?? '';
  const words = p.text
    .replace(/'[^']*'|"(?:[^"\\]|\\.)*"|`[^`]*`/g, 'V')
    .replace(/(?<![\w.[])-?\d+(?:\.\d+)?(?![\w\]])/g, 'N');
  return `${p.check}\0${key}\0${words}`;
}

/**
 * `config set KEY VALUE`'s check before anything is written: a ConfigError (exit 78) with the
 * problems the change would add, in the words the gateway would use. Problems the file already had
 * (the same check, setting and words, whatever the value now) do not block a change (it may be the
 * first of several fixes); they are returned, to be shown.
 */
export async function checkConfigSet(key: string, valueText: string, where: Where): Promise<string[]> {
  return checkConfigChange(plannedConfig(where.paths.config, key, valueText), where);
}

/** The same check for any planned content of the file (`config unset` removes a key). */
export async function checkConfigChange(planned: Record<string, unknown>, where: Where): Promise<string[]> {
  const file = where.paths.config;
  const after = await rawProblems(planned, where);
  if (!after.length) return [];
  const before = new Set((await rawProblems(readConfigFile(file), where)).map(problemIdentity));
  const added = [...new Set(after.filter((p) => !before.has(problemIdentity(p))).map((p) => p.text))];
  if (added.length) throw new ConfigError(`${added.join('\n')}\n${file} was not changed (the gateway and pinclaw agent would refuse to start with it)`);
  return [...new Set(after.map((p) => p.text))];
}
