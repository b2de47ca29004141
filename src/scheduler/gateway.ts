// The scheduler and the heartbeat as the gateway runs them: their channels (made before the
// conductor, which must know every channel), then, once the conductor runs, the job loop and the
// heartbeat timer, both handed the conductor's submit. Bad heartbeat settings are configuration
// errors found before anything starts.
import type { ChannelAdapter } from '../conductor/conductor.js';
import type { PinclawConfig } from '../config/schema.js';
import { ConfigError } from '../errors.js';
import { log } from '../log.js';
import type { Db } from '../store/db.js';
import type { NewInbound } from '../store/queue.js';
import { cronChannel } from './cron-channel.js';
import { DURATION_FORMS, formatDuration, parseDuration } from './duration.js';
import { createHeartbeat, heartbeatChannel, type Forward } from './heartbeat.js';
import { activeJobCount } from './jobs.js';
import { chatProblem, deliverableChannels, LOG_TARGET, ownerTarget, splitTarget, undeliverable } from './targets.js';
import { createScheduler } from './scheduler.js';

/** What the scheduler needs of the conductor. */
export interface ConductorPort {
  submit(msg: NewInbound): { id: number };
  send: Forward;
}

export interface Scheduling {
  channels: ChannelAdapter[];
  /** Starts the job loop and the heartbeat once the conductor runs; the function returned stops both. */
  start(o: { db: Db; conductor: ConductorPort; channels: readonly string[] }): () => void;
}

function heartbeatSettings(config: PinclawConfig): { everyMs: number; deliver?: { channel: string; chatId: string } } {
  const { every, deliver } = config.heartbeat;
  const everyMs = parseDuration(every);
  if (everyMs === undefined) throw new ConfigError(`heartbeat.every: expected a duration (${DURATION_FORMS}) or 0 to turn it off, got '${every}'`);
  if (everyMs > 0 && everyMs < 60_000) throw new ConfigError(`heartbeat.every: '${every}' is shorter than a minute; every heartbeat with a task is a model call`);
  if (config.heartbeat.session.trim() === '') throw new ConfigError('heartbeat.session: expected a session key, got an empty string');
  if (deliver === LOG_TARGET) return { everyMs };
  // Unset: the owner hears what the heartbeat finds (owner.notify), else it is logged.
  if (deliver === undefined || deliver === '') return { everyMs, deliver: ownerTarget(config) };
  const target = splitTarget(deliver);
  if (!target) throw new ConfigError(`heartbeat.deliver: expected CHANNEL:CHAT such as telegram:12345, got '${deliver}', or log`);
  if (!deliverableChannels(config).includes(target.channel)) throw new ConfigError(`heartbeat.deliver: ${undeliverable(target.channel, config)}`);
  const problem = chatProblem(target);
  if (problem) throw new ConfigError(`heartbeat.deliver: ${problem}`);
  return { everyMs, deliver: target };
}

/** Throws a ConfigError for bad heartbeat.* settings; call it before anything starts. */
export function prepareScheduling(o: { config: PinclawConfig; workspace: string }): Scheduling {
  const { everyMs, deliver } = heartbeatSettings(o.config);
  let forward: Forward | undefined;
  return {
    channels: [cronChannel(), heartbeatChannel({ deliver, forward: () => forward })],
    start({ db, conductor, channels }) {
      forward = (m) => conductor.send(m);
      const submit = (m: NewInbound) => conductor.submit(m);
      const scheduler = createScheduler({ db, submit, channels });
      scheduler.start();
      const jobs = activeJobCount(db);
      if (jobs) log.info(`scheduler: ${jobs} active job${jobs === 1 ? '' : 's'}`);
      const heartbeat = everyMs > 0 ? createHeartbeat({ db, workspace: o.workspace, everyMs, session: o.config.heartbeat.session, submit }) : undefined;
      heartbeat?.start();
      if (heartbeat) log.debug(`heartbeat every ${formatDuration(everyMs)}${deliver ? `, replies to ${deliver.channel}:${deliver.chatId}` : ''}`);
      return () => {
        heartbeat?.stop();
        scheduler.stop();
      };
    },
  };
}
