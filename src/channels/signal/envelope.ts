// A receive event as signal-cli writes it (JsonMessageEnvelope and its parts in signal-cli's
// org.asamk.signal.json), and what pinclaw reads from it: who wrote, in which chat, the text with
// its mentions, the attachments, and whether a group message is addressed to the bot. Pure
// functions, so every rule is tested without a daemon.

export interface SignalAttachment {
  contentType?: string | null;
  filename?: string | null;
  /** the file's name in the daemon's attachments directory */
  id?: string | null;
  size?: number | null;
}

export interface SignalMention {
  /** deprecated by signal-cli in favour of number and uuid */
  name?: string | null;
  number?: string | null;
  uuid?: string | null;
  start: number;
  length: number;
}

export interface SignalDataMessage {
  timestamp: number;
  message?: string | null;
  groupInfo?: { groupId: string; groupName?: string | null; type?: string | null } | null;
  mentions?: SignalMention[] | null;
  attachments?: SignalAttachment[] | null;
  quote?: { id?: number; author?: string | null; authorNumber?: string | null; authorUuid?: string | null } | null;
  reaction?: unknown;
  remoteDelete?: unknown;
  sticker?: unknown;
}

export interface SignalEnvelope {
  source?: string | null;
  sourceNumber?: string | null;
  sourceUuid?: string | null;
  sourceName?: string | null;
  sourceDevice?: number | null;
  timestamp: number;
  dataMessage?: SignalDataMessage | null;
  syncMessage?: unknown;
  receiptMessage?: unknown;
  typingMessage?: unknown;
}

export interface ReceiveEvent {
  envelope: SignalEnvelope;
  account?: string;
}

/** Who wrote: their number when the daemon knows it, and their ACI. */
export interface Sender {
  number?: string;
  uuid?: string;
  name?: string;
}

export const senderOf = (e: SignalEnvelope): Sender => {
  const number = e.sourceNumber ?? (e.source?.startsWith('+') ? e.source : undefined);
  const uuid = e.sourceUuid ?? (e.source && !e.source.startsWith('+') ? e.source : undefined);
  return { ...(number ? { number } : {}), ...(uuid ? { uuid } : {}), ...(e.sourceName ? { name: e.sourceName } : {}) };
};

/** The sender as one string: the number, else uuid:<ACI> (the allowFrom and pairing form). */
export const senderKey = (s: Sender): string | undefined => s.number ?? (s.uuid ? `uuid:${s.uuid}` : undefined);

/**
 * The envelope's identity, the same each time the daemon hands it over (a reconnect, a restarted
 * daemon replaying what it kept): the sender and the timestamp the sender's device gave the message,
 * which Signal itself uses to name a message.
 */
export const envelopeKey = (e: SignalEnvelope): string | undefined => {
  const s = senderOf(e);
  const who = s.uuid ?? s.number;
  return who ? `${who}:${e.timestamp}` : undefined;
};

// Group ids are standard base64 ('+', '/', '='); the chat id carries them url-safe, so a session key
// is one plain word wherever it is shown or used.
const toUrlSafe = (id: string) => id.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
const fromUrlSafe = (id: string) => {
  const b = id.replace(/-/g, '+').replace(/_/g, '/');
  return b + '='.repeat((4 - (b.length % 4)) % 4);
};

export const GROUP_PREFIX = 'group.';

/** The chat a message belongs to: `group.<id>` for a group, else the sender (number or uuid:<ACI>). */
export function chatIdOf(e: SignalEnvelope): string | undefined {
  const g = e.dataMessage?.groupInfo?.groupId;
  if (g) return `${GROUP_PREFIX}${toUrlSafe(g)}`;
  return senderKey(senderOf(e));
}

/** Where a chat id's messages go: the daemon's send/sendTyping parameters. */
export function targetOf(chatId: string): { groupId: string } | { recipient: string[] } {
  if (chatId.startsWith(GROUP_PREFIX)) return { groupId: fromUrlSafe(chatId.slice(GROUP_PREFIX.length)) };
  return { recipient: [chatId.startsWith('uuid:') ? chatId.slice(5) : chatId] };
}

export const isGroupChat = (chatId: string) => chatId.startsWith(GROUP_PREFIX);

/** U+FFFC, which Signal puts in the text where a mention stands. */
const MENTION_MARK = '\uFFFC';

const isBot = (who: { number?: string | null; uuid?: string | null; author?: string | null; authorNumber?: string | null }, account: string) =>
  who.number === account || who.authorNumber === account || who.author === account;

/**
 * The text the agent should see, or null when a group message is not for the bot. A mention of the
 * bot is taken out of the text; other mentions become @number (or @name). In a group the bot answers a
 * message that mentions it or quotes one of its messages.
 */
export function addressedText(m: SignalDataMessage, account: string): string | null {
  let text = m.message ?? '';
  let mentioned = false;
  // Replaced from the end, so earlier positions stay right.
  for (const mention of [...(m.mentions ?? [])].sort((a, b) => b.start - a.start)) {
    const bot = isBot(mention, account);
    mentioned ||= bot;
    const label = bot ? '' : `@${mention.number ?? mention.name ?? mention.uuid ?? 'someone'}`;
    text = text.slice(0, mention.start) + label + text.slice(mention.start + mention.length);
  }
  // A mark no mention explains is dropped too: it shows as a box.
  text = text.replaceAll(MENTION_MARK, '').replace(/[ \t]{2,}/g, ' ').trim();
  if (m.groupInfo?.groupId && !mentioned && !(m.quote && isBot(m.quote, account))) return null;
  return text;
}
