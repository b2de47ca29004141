// One receive event becomes a queued message: the sender is checked (allow-list, pairing), a group
// message must be addressed to the bot, attachments are copied from the daemon's directory into the
// workspace first, and the commit (the inbound row) is returned to the receiver, which stores it
// together with the envelope's key (./seen.ts).
import { copyFileSync, mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Conductor } from '../../conductor/conductor.js';
import { errorMessage } from '../../errors.js';
import { log } from '../../log.js';
import type { Db } from '../../store/db.js';
import { claimPrompt, isPaired, requestPairing } from '../../store/pairing.js';
import { approveCommand } from '../pairing-hint.js';
import { addressedText, chatIdOf, isGroupChat, senderKey, senderOf, type ReceiveEvent, type Sender, type SignalAttachment } from './envelope.js';

export interface InboundOptions {
  db: Db;
  conductor: Conductor;
  account: string;
  allowFrom: readonly string[];
  attachmentsDir: string;
  maxFileBytes: number;
  maxMessageChars: number;
  workspace: string;
  /** the gateway's home: the pairing hint names it when it is not the default one */
  home?: string;
  /** a yes or no to a pending confirmation in that chat; true when it was one (and is taken) */
  answer(chatId: string, text: string): boolean;
}

/**
 * A receive event's commit: a synchronous function run in the transaction that records the envelope
 * as taken; `receipt`: the message became a turn, so the sender is shown it was read once it is saved.
 */
export type Commit = (() => void) & { receipt?: boolean };

// Files the agent can read or pass on; an executable or an archive is refused (as on Telegram).
const ACCEPTED_TYPES = /^(image\/|text\/|audio\/|application\/(pdf|json|xml|x-yaml|yaml|csv))/;

/** A chat's session: signal:<number>, signal:uuid:<ACI>, or signal:group.<id> (docs/channels.md). */
export const sessionKeyFor = (chatId: string) => `signal:${chatId}`;

const nothing: Commit = () => {};

export function isAllowed(allowFrom: readonly string[], s: Sender): boolean {
  return allowFrom.some((e) => (s.number !== undefined && e === s.number) || (s.uuid !== undefined && e.toLowerCase() === `uuid:${s.uuid.toLowerCase()}`));
}

export function createInbound(o: InboundOptions): (ev: ReceiveEvent) => Commit {
  const reply = (chatId: string, text: string, key: string) =>
    // Durable like every reply: recorded now, delivered (and retried) by the conductor.
    o.conductor.send({ channel: 'signal', chatId, text, idempotencyKey: key });

  const allowed = (s: Sender) =>
    isAllowed(o.allowFrom, s) || (s.number !== undefined && isPaired(o.db, 'signal', s.number)) || (s.uuid !== undefined && isPaired(o.db, 'signal', `uuid:${s.uuid}`));

  function saveFiles(atts: readonly SignalAttachment[], timestamp: number): { notes: string[]; refusals: string[] } {
    const notes: string[] = [];
    const refusals: string[] = [];
    atts.forEach((a, i) => {
      const type = a.contentType ?? 'application/octet-stream';
      const shown = a.filename ?? `attachment ${i + 1}`;
      if (!ACCEPTED_TYPES.test(type)) return void refusals.push(`I don't accept ${type} files (${shown}); I take images, audio, text, PDF, JSON, XML, YAML and CSV up to ${o.maxFileBytes} bytes.`);
      if (!a.id || /[/\\]|^\.\.?$/.test(a.id)) return void refusals.push(`The daemon did not store ${shown}, so I could not read it.`);
      const from = join(o.attachmentsDir, a.id);
      let size: number;
      try {
        size = statSync(from).size;
      } catch (err) {
        log.warn(`signal: attachment ${from} cannot be read (${errorMessage(err)}); check channels.signal.attachmentsDir (the daemon's data directory + /attachments)`);
        return void refusals.push(`I could not read ${shown} where the Signal daemon keeps attachments; my owner sees why in my log.`);
      }
      if (size > o.maxFileBytes) return void refusals.push(`${shown} is ${size} bytes, more than the ${o.maxFileBytes} bytes I accept (channels.signal.maxFileBytes); it was not saved.`);
      const day = new Date(timestamp).toISOString().slice(0, 10);
      const name = (a.filename ?? a.id).replace(/[^\w.\-]+/g, '_').replace(/^\.+/, '_').slice(-100);
      const rel = join('inbox', 'signal', day, `${timestamp}-${i}-${name}`);
      mkdirSync(join(o.workspace, 'inbox', 'signal', day), { recursive: true });
      // Same name for the same message: an envelope handed over again rewrites the same file.
      copyFileSync(from, join(o.workspace, rel));
      notes.push(`[the sender attached a file, saved in the workspace as ${rel} (${size} bytes, ${type})]`);
    });
    return { notes, refusals };
  }

  return (ev) => {
    const e = ev.envelope;
    const m = e.dataMessage;
    // Receipts, typing, sync messages (the account's own other devices), reactions and deletions start no turn.
    if (!m || m.reaction || m.remoteDelete) return nothing;
    const sender = senderOf(e);
    const from = senderKey(sender);
    const chatId = chatIdOf(e);
    if (!from || !chatId || sender.number === o.account) return nothing;
    const text = addressedText(m, o.account);
    if (text === null) return nothing;
    if (!allowed(sender)) {
      // A stranger starts no turn. In a direct chat they learn how to ask, at most once an hour; in a
      // group the bot stays quiet.
      if (isGroupChat(chatId)) return nothing;
      const label = sender.name ? `${sender.name} (${from})` : from;
      return () => {
        const pairing = requestPairing(o.db, 'signal', from, label);
        if (!claimPrompt(o.db, pairing.id)) return;
        const approve = approveCommand(pairing.code, o.home);
        log.info(`signal: ${label} asked to talk to the bot; to let them in: ${approve}`);
        reply(chatId, `I only talk to my owner. To let you in, my owner runs this on my machine:\n\n${approve}\n\n(The code is good for an hour.)`, `pairing:${pairing.id}:${pairing.code}`);
      };
    }
    if (o.answer(chatId, text)) return nothing;
    let files: { notes: string[]; refusals: string[] };
    try {
      files = saveFiles(m.attachments ?? [], e.timestamp);
    } catch (err) {
      log.warn(`signal: attachments from ${chatId} could not be saved: ${errorMessage(err)}`);
      files = { notes: [], refusals: [`I could not save your attachment (${errorMessage(err)}). Please send it again.`] };
    }
    const body = [text, ...files.notes].filter(Boolean).join('\n\n');
    const key = `${chatId}:${from}:${e.timestamp}`;
    const commit: Commit = () => {
      if (files.refusals.length) reply(chatId, files.refusals.join('\n'), `refused:${key}`);
      if (!body) return;
      if (body.length > o.maxMessageChars) {
        reply(chatId, `Your message has ${body.length} characters, more than the ${o.maxMessageChars} I accept (agent.maxMessageChars); please send it in smaller parts.`, `too-long:${key}`);
        return;
      }
      o.conductor.submit({
        sessionKey: sessionKeyFor(chatId), channel: 'signal', chatId, sender: from, text: body,
        meta: { timestamp: e.timestamp, author: sender.number ?? sender.uuid, group: isGroupChat(chatId) },
      });
    };
    commit.receipt = body !== '' && body.length <= o.maxMessageChars;
    return commit;
  };
}
