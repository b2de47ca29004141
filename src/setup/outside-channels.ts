// The channels that reach an outside service (Telegram, Signal, Discord, Matrix), as one table: when each runs (its config), and where
// its code is (a lazy chunk, loaded only then). The gateway creates, starts and stops them all the
// same way, so a new channel is one row here, and one failing channel never touches the others.
import { errorMessage } from '../errors.js';
import { log } from '../log.js';
import type { PinclawConfig } from '../config/schema.js';
import type { Conductor } from '../conductor/conductor.js';
import type { ExternalChannel, ExternalChannelOptions } from '../channels/external.js';

interface OutsideChannel {
  name: string;
  /** whether the config asks for it: without that its code is never loaded */
  configured(config: PinclawConfig): boolean;
  create(o: ExternalChannelOptions): Promise<ExternalChannel>;
}

// Each import() names its file literally: the build turns it into a load of that channel's chunk.
const OUTSIDE_CHANNELS: readonly OutsideChannel[] = [
  // Telegram runs when it has a token.
  { name: 'telegram', configured: (c) => !!c.channels.telegram.token, create: async (o) => (await import('../channels/telegram/channel.js')).createTelegramChannel(o) },
  // Signal runs when it has a signal-cli daemon to talk to.
  { name: 'signal', configured: (c) => !!c.channels.signal.url, create: async (o) => (await import('../channels/signal/channel.js')).createSignalChannel(o) },
  // Discord runs when it has a bot token.
  { name: 'discord', configured: (c) => !!c.channels.discord.token, create: async (o) => (await import('../channels/discord/channel.js')).createDiscordChannel(o) },
  // Matrix runs when it has a homeserver and an access token.
  { name: 'matrix', configured: (c) => !!c.channels.matrix.homeserver && !!c.channels.matrix.accessToken, create: async (o) => (await import('../channels/matrix/channel.js')).createMatrixChannel(o) },
];

export interface OutsideChannels {
  list: readonly ExternalChannel[];
  /**
   * Starts each in the background: a refused token or an unreachable service is logged and shown as
   * that channel's state, and the gateway does not wait for any of them to answer before listening.
   */
  start(conductor: Conductor): void;
  /** Stops each (its turn in flight is not cut: the conductor's drain follows), and awaits its start. */
  stop(): Promise<void>;
}

export async function createOutsideChannels(o: ExternalChannelOptions): Promise<OutsideChannels> {
  const list: ExternalChannel[] = [];
  for (const c of OUTSIDE_CHANNELS) if (c.configured(o.config)) list.push(await c.create(o));
  const started: Promise<void>[] = [];
  return {
    list,
    start(conductor) {
      for (const ch of list) started.push(ch.start(conductor).catch((err: unknown) => log.error(`${ch.name}: ${errorMessage(err)}`)));
    },
    async stop() {
      for (const ch of list) {
        try {
          await ch.stop();
        } catch (err) {
          log.warn(`stopping ${ch.name}: ${errorMessage(err)}`);
        }
      }
      await Promise.all(started);
    },
  };
}
