// A real broker for the MQTT tests: Debian's mosquitto (installed by scripts/setup.mjs), started on a
// free loopback port with its own config, password file and persistence directory, so it can be
// stopped and started again on the same port with its retained messages and persistent sessions
// (QoS 1 messages queued for a disconnected client survive the restart).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { userInfo } from 'node:os';
import mqtt, { type IClientOptions, type MqttClient } from 'mqtt';
import { tempDir } from './proc.js';
import { freePort } from './free-port.js';

export { freePort };

export const MOSQUITTO = ['/usr/sbin/mosquitto', '/usr/bin/mosquitto'].find((p) => existsSync(p));

export interface BrokerOptions {
  /** users and passwords; when given, anonymous clients are refused */
  users?: Record<string, string>;
  /** keep retained messages and sessions across stop/start (default true) */
  persistence?: boolean;
  /** also a TLS listener with a certificate for 127.0.0.1 signed by a CA made for this broker */
  tls?: boolean;
  /** also a WebSocket listener */
  websockets?: boolean;
}

export interface Broker {
  port: number;
  url: string;
  /** mqtts://127.0.0.1:N with `tls` */
  tlsUrl?: string;
  /** the PEM file of the CA that signed the TLS listener's certificate */
  caFile?: string;
  /** ws://127.0.0.1:N with `websockets` */
  wsUrl?: string;
  dir: string;
  /** what the broker wrote to its log so far */
  log(): string;
  /** SIGTERM and wait; persistence is written on the way out */
  stop(): Promise<void>;
  /** starts it again on the same port, with the same persistence */
  start(): Promise<void>;
}


/** Waits until something accepts TCP connections on the port. */
async function listening(port: number, child: ChildProcess, log: () => string, timeoutMs = 10_000): Promise<void> {
  const { connect } = await import('node:net');
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`mosquitto exited with ${child.exitCode}:\n${log()}`);
    const ok = await new Promise<boolean>((res) => {
      const c = connect(port, '127.0.0.1');
      c.once('connect', () => {
        c.destroy();
        res(true);
      });
      c.once('error', () => res(false));
    });
    if (ok) return;
    if (Date.now() > until) throw new Error(`mosquitto did not listen on ${port} within ${timeoutMs} ms:\n${log()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A CA and a certificate for 127.0.0.1 it signed, with openssl (ca.pem, server.pem, server.key in dir). */
function makeCertificates(dir: string): void {
  const sh = (args: string[]) => {
    const r = spawnSync('openssl', args, { cwd: dir, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`openssl ${args[0]}: ${r.stderr || r.error?.message}`);
  };
  writeFileSync(join(dir, 'san.cnf'), 'subjectAltName=IP:127.0.0.1\n');
  sh(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=pinclaw test CA']);
  sh(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=127.0.0.1']);
  sh(['x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.pem', '-days', '2', '-extfile', 'san.cnf']);
}

export async function startBroker(o: BrokerOptions = {}): Promise<Broker> {
  if (!MOSQUITTO) throw new Error('mosquitto is not installed (npm run setup installs it)');
  const dir = tempDir('pinclaw-mosquitto-');
  const port = await freePort();
  const lines = [`listener ${port} 127.0.0.1`, `persistence ${o.persistence === false ? 'false' : 'true'}`, `persistence_location ${dir}/`, 'log_dest stderr', 'log_type error', 'log_type warning', 'log_type notice', 'log_type information', 'connection_messages true', 'max_queued_messages 100000', 'set_tcp_nodelay true', `user ${userInfo().username}`];
  if (o.users) {
    const pw = join(dir, 'passwd');
    writeFileSync(pw, '');
    for (const [user, pass] of Object.entries(o.users)) {
      const r = spawnSync('mosquitto_passwd', ['-b', pw, user, pass], { encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`mosquitto_passwd: ${r.stderr || r.error?.message}`);
    }
    lines.push('allow_anonymous false', `password_file ${pw}`);
  } else {
    lines.push('allow_anonymous true');
  }
  let tlsPort: number | undefined;
  let wsPort: number | undefined;
  if (o.tls) {
    tlsPort = await freePort();
    makeCertificates(dir);
    // Listener options follow their listener line; the default listener's are set above it.
    lines.push(`listener ${tlsPort} 127.0.0.1`, `cafile ${dir}/ca.pem`, `certfile ${dir}/server.pem`, `keyfile ${dir}/server.key`);
  }
  if (o.websockets) {
    wsPort = await freePort();
    lines.push(`listener ${wsPort} 127.0.0.1`, 'protocol websockets');
  }
  mkdirSync(dir, { recursive: true });
  const conf = join(dir, 'mosquitto.conf');
  writeFileSync(conf, lines.join('\n') + '\n');
  let out = '';
  let child: ChildProcess | undefined;
  const startOnce = async () => {
    const c = spawn(MOSQUITTO, ['-c', conf], { stdio: ['ignore', 'pipe', 'pipe'] });
    c.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    c.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    child = c;
    await listening(port, c, () => out);
  };
  await startOnce();
  return {
    port,
    url: `mqtt://127.0.0.1:${port}`,
    ...(tlsPort ? { tlsUrl: `mqtts://127.0.0.1:${tlsPort}`, caFile: join(dir, 'ca.pem') } : {}),
    ...(wsPort ? { wsUrl: `ws://127.0.0.1:${wsPort}` } : {}),
    dir,
    log: () => out,
    async stop() {
      const c = child;
      if (!c || c.exitCode !== null || c.signalCode !== null) return;
      await new Promise<void>((res) => {
        c.once('exit', () => res());
        c.kill('SIGTERM');
      });
    },
    start: startOnce,
  };
}

export interface Received {
  topic: string;
  text: string;
  /** the payload parsed, when it is a JSON object */
  json: Record<string, unknown> | undefined;
  retain: boolean;
}

/** A plain `mqtt` client (the peer: a phone, Home Assistant, another board) that records what arrives on its filters. */
export async function recordingClient(b: Broker, filters: string[], opts: IClientOptions = {}): Promise<{ client: MqttClient; got: Received[] }> {
  const client = await mqtt.connectAsync(b.url, { clientId: `t-${Math.random().toString(16).slice(2)}`, reconnectPeriod: 100, ...opts });
  client.on('error', () => {});
  const got: Received[] = [];
  client.on('message', (topic, p, packet) => {
    let json: Record<string, unknown> | undefined;
    try {
      const v: unknown = JSON.parse(p.toString());
      json = typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
    } catch {
      json = undefined;
    }
    got.push({ topic, text: p.toString(), json, retain: packet.retain });
  });
  if (filters.length) await client.subscribeAsync(filters, { qos: 1 });
  return { client, got };
}

/** Polls `probe` until it gives something, or fails after `ms` naming what it waited for. */
export async function until<T>(what: string, probe: () => T | undefined | false, ms = 10_000, detail?: () => string): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = probe();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}${detail ? `:\n${detail()}` : ''}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
