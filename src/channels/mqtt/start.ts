// MQTT in the gateway: the entry of the lazy `mqtt` chunk (scripts/build.mjs), loaded only when
// mqtt.url is set. It puts together the one broker connection and what uses it: the chat channel,
// Home Assistant discovery, MQTT triggers and the fleet's remote tools. Each part gets plain
// functions (submit, runTool) from the gateway, so none of them imports the conductor.
import type { Hooks } from '../../hooks/index.js';
import { gatedSubmit } from '../../hooks/trigger-gate.js';
import type { PinclawConfig } from '../../config/schema.js';
import type { Bus } from '../../conductor/bus.js';
import type { ChannelAdapter, Conductor } from '../../conductor/conductor.js';
import { createRedactor, secretValues } from '../../config/redact.js';
import { errorMessage } from '../../errors.js';
import { log } from '../../log.js';
import type { Db } from '../../store/db.js';
import type { Registry } from '../../tools/registry.js';
import type { Tool } from '../../tools/types.js';
import { haEntitiesOf, type HardwareSources } from '../../fleet/hardware-entities.js';
import { startHomeAssistant } from '../../fleet/home-assistant.js';
import { remoteTool, startFleetServer } from '../../fleet/remote.js';
import { checkMqttTriggers, startMqttTriggers } from '../../fleet/triggers.js';
import { routeSession } from '../../hardware/triggers/runner.js';
import { legacyChatNames } from '../../tools/policy.js';
import { checkChatSettings, createMqttChat, mqttSessionsWithRights } from './chat.js';
import { checkMqttSettings, nodeIdOf, openMqttLink, probeBroker, type MqttLink, type MqttSettings } from '../../mqtt/connection.js';

export interface MqttRuntime {
  /** the chat channel (when mqtt.chat.enabled) */
  channels: ChannelAdapter[];
  /** remote_tool */
  tools: Tool[];
  /** trigger turns are answered on the 'hardware' channel (mqtt.chat off): the gateway must run one */
  needsHardwareChannel: boolean;
  /** Connects and starts every part; returns when they are registered (not when the broker answers). */
  /** hooks: the HardwareTrigger hooks every MQTT trigger's message passes first */
  start(o: { conductor: Conductor; tools: Registry; knownChannels: readonly string[]; hardware: HardwareSources | undefined; startedAt: number; hooks?: Hooks }): void;
  /** Stops the parts, publishes `offline` and disconnects. */
  close(): Promise<void>;
}

/**
 * What the schema cannot check of mqtt.*: a ConfigError (exit 78). The gateway runs it before
 * anything starts, and `config validate` and `config set` run it (src/setup/config-checks.ts).
 */
export function checkMqttConfig(config: PinclawConfig): void {
  const settings = config.mqtt;
  checkMqttSettings(settings);
  checkMqttTriggers(settings.triggers);
  if (settings.chat.enabled) checkChatSettings(settings.chat);
}

/** Checks the settings (a ConfigError exits 78 before anything starts) and builds the parts. */
export function prepareMqtt(o: { config: PinclawConfig; db: Db; bus: Bus; home?: string }): MqttRuntime {
  const settings = o.config.mqtt;
  checkMqttConfig(o.config);
  const nodeId = nodeIdOf(settings);
  let link: MqttLink | undefined;
  const linkNow = () => {
    if (!link) throw new Error('mqtt is not started yet');
    return link;
  };
  // An old internal chat name in the tool settings keeps its meaning; the owner is told to rename it.
  for (const note of legacyChatNames(o.config.tools)) log.warn(`config: ${note}`);
  const chat = settings.chat.enabled ? createMqttChat({ link: linkNow, db: o.db, settings, tools: o.config.tools, ...(o.home ? { home: o.home } : {}) }) : undefined;
  // The chat was on by default before it checked senders: an owner who relied on it learns here why
  // chat/in went quiet, and how to turn it back on safely.
  if (!chat) log.info('mqtt: the MQTT chat is off (it answers only named senders now and is off until turned on): pinclaw config set mqtt.chat.enabled true, and name each sender with a token in mqtt.chat.allowFrom or approve it with pinclaw pairing approve CODE (docs/mqtt.md)');
  else if (!settings.chat.allowFrom.length) log.info('mqtt: the MQTT chat is on with an empty mqtt.chat.allowFrom: each sender needs the owner\'s pinclaw pairing approve CODE first (docs/mqtt.md)');
  if (chat) {
    // A session with rights that no sender lists is closed to everyone: said once, with the way in.
    const listed = new Set(settings.chat.allowFrom.flatMap((e) => e.sessions ?? []));
    for (const name of mqttSessionsWithRights(o.config.tools)) {
      if (!listed.has(name)) log.info(`mqtt: the session ${name} has rights of its own (tools.controlChats or tools.overrides) and no mqtt.chat.allowFrom entry lists it in "sessions", so no sender may talk there (docs/mqtt.md)`);
    }
  }
  const remote = remoteTool({ link: linkNow, nodeId, settings });
  const stops: (() => void)[] = [];
  return {
    channels: chat ? [chat.channel] : [],
    tools: [remote.tool],
    needsHardwareChannel: !chat && settings.triggers.length > 0,
    start(s) {
      // Opened here, and every subscription registered in this same tick: the broker's queued QoS 1
      // messages (a resumed session) can arrive only after the handlers exist.
      const l = openMqttLink({ settings });
      link = l;
      stops.push(l.onState((state, detail) => o.bus.emit({ type: 'channel_status', channel: 'mqtt', state, detail })));
      // Replies that waited for the broker go out as soon as it is back.
      stops.push(l.onConnect(() => s.conductor.retryDelivery('mqtt')));
      if (chat) stops.push(chat.start((m) => s.conductor.submit(m)));
      stops.push(remote.start());
      // A trigger's session that names no chat ("home") is answered on chat/out with that session.
      const channelFor = (session: string) => {
        const r = routeSession(session, s.knownChannels);
        return chat && r.channel === 'hardware' ? { channel: 'mqtt', chatId: session } : r;
      };
      const triggers = startMqttTriggers({ link: l, triggers: settings.triggers, submit: gatedSubmit((m) => s.conductor.submit(m), s.hooks), channelFor });
      stops.push(() => triggers.stop());
      const redact = createRedactor(secretValues(o.config, process.env));
      // A tool another node calls here may be one that sends (send_message, when exposed) or spawns:
      // it is lent this gateway's conductor and registry as a turn's tools are.
      stops.push(startFleetServer({ link: l, db: o.db, settings, redact, runTool: (call, ctx) => s.tools.run(call, { ...ctx, tools: s.tools, send: (m) => s.conductor.send(m) }), readOnly: (tool) => s.tools.get(tool)?.readOnly === true }));
      if (settings.homeAssistant.enabled) {
        stops.push(startHomeAssistant({ link: l, db: o.db, settings, entities: s.hardware ? haEntitiesOf(s.hardware) : { lines: [], devices: [], sensors: [] }, bus: o.bus, startedAt: s.startedAt, physicalMaxAgeSeconds: o.config.tools.physicalMaxAgeSeconds, runTool: (call, ctx) => s.tools.run(call, ctx) }));
      }
    },
    async close() {
      for (const stop of stops.reverse()) {
        try {
          stop();
        } catch (err) {
          log.warn(`mqtt: stopping: ${errorMessage(err)}`);
        }
      }
      await link?.close();
    },
  };
}

/**
 * doctor's "mqtt" check: the settings, one connection attempt, and the node's retained status; a
 * warning while the tool settings still use the old name of Home Assistant's commands.
 */
export async function mqttCheck(settings: MqttSettings, tools?: PinclawConfig['tools']): Promise<{ name: 'mqtt'; state: 'ok' | 'warn' | 'fail'; detail: string }> {
  try {
    checkMqttTriggers(settings.triggers);
    if (settings.chat.enabled) checkChatSettings(settings.chat);
    const r = await probeBroker(settings);
    const legacy = tools ? legacyChatNames(tools) : [];
    if (r.ok && legacy.length) return { name: 'mqtt', state: 'warn', detail: `${r.detail}; ${legacy.join('; ')}` };
    return { name: 'mqtt', state: r.ok ? 'ok' : 'fail', detail: r.detail };
  } catch (err) {
    return { name: 'mqtt', state: 'fail', detail: errorMessage(err) };
  }
}
