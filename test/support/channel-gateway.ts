// What the channel tests share (Telegram, voice notes, Signal, MQTT chat): the gateway as a real
// process (the bundle) in a home of its own with the config the test writes, the Anthropic stand-in
// answering each turn with "echo: <the owner's text>", restart and teardown, and reads of the
// home's SQLite file as the gateway left it.
import type { Test } from 'tap';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openDatabase } from '../../src/store/db.js';
import { startAnthropicServer, textReply, type AnthropicStep } from './anthropic-server.js';
import { bundle, cleanEnv, start, tempDir, type Started } from './proc.js';
import type { Step } from './stand-in.js';

/** the user's text as the provider received it in the last message */
export const lastUser = (body: { messages: { content: unknown }[] }) => JSON.stringify(body.messages.at(-1)!.content);

/** "echo: " and the text of the owner's last message (after the prompt's "[time]" prefix) */
export const echo: Step<AnthropicStep> = (req) => textReply(`echo: ${/\] ([^"\\]*)/.exec(lastUser(req.body))?.[1] ?? '?'}`);

export interface ChannelGateway {
  llm: Awaited<ReturnType<typeof startAnthropicServer>>;
  home: string;
  env: NodeJS.ProcessEnv;
  /** the running gateway (replaced by restart) */
  gw: Started & { url: string };
  /** starts the gateway again (after the test stopped or killed it), with extra environment */
  restart(extra?: Record<string, string>): Promise<void>;
}

export interface ChannelGatewayOptions {
  /** config.json, given the home it is written into */
  config: (home: string) => Record<string, unknown>;
  llm?: Step<AnthropicStep>;
  env?: Record<string, string>;
  /** the test's stand-ins, closed after the gateway is killed */
  close?: () => Promise<void>;
}

export async function startChannelGateway(t: Test, o: ChannelGatewayOptions): Promise<ChannelGateway> {
  const llm = await startAnthropicServer(o.llm ?? echo);
  const home = tempDir();
  writeFileSync(join(home, 'config.json'), JSON.stringify(o.config(home)));
  const env = cleanEnv({ PINCLAW_HOME: home, ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: llm.url, PINCLAW_AGENT_RETRY_BASE_MS: '10', ...o.env });
  const g = { llm, home, env } as ChannelGateway;
  g.restart = async (extra = {}) => {
    const gw = start(process.execPath, [bundle, 'gateway', '--port', '0'], { env: { ...env, ...extra } });
    const m = await gw.waitFor(/gateway listening on (http:\/\/[^\s]+)/);
    g.gw = { ...gw, url: m[1]! };
  };
  t.teardown(async () => {
    g.gw?.child.kill('SIGKILL');
    await g.gw?.exited;
    await Promise.all([o.close?.(), llm.close()]);
  });
  await g.restart();
  return g;
}

/** rows of the home's database, read-only, as the gateway left them */
export function dbRows<T>(home: string, q: string, ...args: unknown[]): T[] {
  const db = openDatabase(join(home, 'pinclaw.db'), { readonly: true });
  try {
    return db.prepare(q).all(...args) as T[];
  } finally {
    db.close();
  }
}
