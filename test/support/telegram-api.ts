// A stand-in for the Telegram Bot API on 127.0.0.1: real HTTP, Telegram's wire format, its error
// texts, and the semantics a bot client depends on, checked against the open-source server
// (tdlib/telegram-bot-api) and TDLib. Point a client's apiBaseUrl at `url`; it serves
// `/bot<token>/<method>` (GET or POST; JSON, form-urlencoded or query-string params; method names
// case-insensitive as in Telegram) and `/file/bot<token>/<file_path>`.
//
//   const api = await startTelegramApi();           // token '123456:TEST-token' → bot id 123456
//   api.userMessage({ from: { id: 42 }, text: 'hi' }); // queues an Update for getUpdates
//   await api.waitFor(() => api.sent.length === 1);    // the client answered
//   api.fail('sendMessage', { status: 429, retryAfter: 3 }); api.fail('getUpdates', { kind: 'hang' });
//   await api.close();
//
// getUpdates: updates below `offset` are confirmed and gone for good, a negative offset keeps only
// the last -offset; with `timeout` and nothing pending the call is held until an update arrives
// (answered a tick later, so updates queued together arrive together) or the timeout gives [].
// As in the real server, a getUpdates that itself starts a long poll ends the one already held
// with 409; one answered at once leaves it alone.
// Text checks follow the server: an empty `text` param → "message text is empty"; text that is
// empty once parsed and trimmed → "text must be non-empty" (Telegram's wording since 2024); over
// 4096 UTF-16 units after parsing and trimming → "message is too long". HTML is parsed by
// ./telegram-html.ts (unknown named entities such as &nbsp; stay literal there, as in Telegram);
// Markdown/MarkdownV2 text is stored as sent. Messages go only to chats a user wrote from (or
// `addChat`), else "chat not found". Replies must target a message of that chat.
// Forum topics (`topicId`): the chat is a forum supergroup; messages carry message_thread_id and
// is_topic_message, and sendMessage/sendChatAction take message_thread_id ("message thread not
// found" for a topic that does not exist).
// Privacy mode (default on): a group message that is no command, no reply to the bot and does not
// mention @bot never becomes an update; `userMessage` still returns the Update it would have been.
// Faults (`fail`) answer before any processing, so a faulted getUpdates confirms nothing; 502 is
// nginx's HTML page like the real front end; 'parse-error' only hits calls that have a parse_mode.
// File downloads are recorded in `calls` as method 'file' and can be faulted as 'file'.
// Voice: `userMessage({ voice })` sends a voice note (the bytes as given: OGG/Opus, as Telegram's
// apps record); sendVoice takes multipart/form-data and, like Telegram, shows only OGG/Opus as a
// voice note: anything else is refused here (Telegram would show it as a file), so a test sees it.
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { BotCommand, CallbackQuery, Chat, File, InlineKeyboardMarkup, Message, MessageEntity, Update, User, UserFromGetMe } from '@grammyjs/types';
import { detectEntities, formatText as parseText, TextRejected } from './telegram-html.js';

export const DEFAULT_TOKEN = '123456:TEST-token';
export const CONFLICT = 'Conflict: terminated by other getUpdates request; make sure that only one bot instance is running';
export const INJECTED_PARSE_ERROR = "Bad Request: can't parse entities: Unexpected end tag at byte offset 0";
const NGINX_502 = '<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n';
const MAX_DOWNLOAD = 20 * 1024 * 1024;

type Params = Record<string, unknown>;
type GroupChat = Exclude<Chat, Chat.ChannelChat>;
export interface UserSpec { id: number; username?: string; first_name?: string; last_name?: string }
export interface UserMessageSpec {
  chatId?: number;
  chatType?: 'private' | 'group' | 'supergroup';
  chatTitle?: string;
  from: UserSpec;
  text?: string;
  caption?: string;
  replyToBotMessageId?: number;
  /** prepends "@botusername " to the text (or caption); Telegram marks it with a mention entity */
  mentionBot?: boolean;
  photo?: { bytes: Buffer; width?: number; height?: number };
  document?: { bytes: Buffer; fileName: string; mimeType: string };
  /**
   * A message in a forum topic (the chat becomes a forum supergroup): Telegram sets message_thread_id
   * (the id of the topic's creation message) and is_topic_message, and a message that replies to
   * nothing else replies to that creation message, as Telegram does. The topic is created on first
   * use, by this user or (`topicByBot`) by the bot.
   */
  topicId?: number;
  topicByBot?: boolean;
  /** a voice note; `duration` in seconds, as the sender's app reports it */
  voice?: { bytes: Buffer; duration: number };
}
export interface CallbackQuerySpec { chatId: number; from: UserSpec; messageId: number; data: string }
export type Fault =
  | { status: 429; retryAfter: number }
  | { status: 409 }
  | { status: 500 | 502 }
  | { status: 401 }
  /** read the request, never answer: a half-open connection only the client's watchdog ends */
  | { kind: 'hang' }
  /** destroy the socket after reading the request */
  | { kind: 'reset' }
  /** 400 can't parse entities, whatever the text (only calls with a parse_mode) */
  | { kind: 'parse-error' };
export interface CallRecord { method: string; params: Params; at: number; status?: number; fault?: string }
export interface SentMessage { chatId: number; messageId: number; text: string; threadId?: number; parseMode?: string; entities?: MessageEntity[]; replyMarkup?: InlineKeyboardMarkup; replyToMessageId?: number; params: Params; at: number }
export interface EditRecord { method: 'editMessageText' | 'editMessageReplyMarkup'; chatId: number; messageId: number; text: string; parseMode?: string; replyMarkup?: InlineKeyboardMarkup; params: Params; at: number }
export interface VoiceRecord { chatId: number; messageId: number; bytes: Buffer; duration?: number; replyToMessageId?: number; threadId?: number; at: number }
export interface ChatActionRecord { chatId: number; action: string; threadId?: number; at: number }
export interface CallbackAnswerRecord { callbackQueryId: string; text?: string; showAlert?: boolean; params: Params; at: number }
export interface TelegramApiOptions { token?: string; username?: string; firstName?: string; privacyMode?: boolean; canJoinGroups?: boolean; updateIdBase?: number }

export interface TelegramApi {
  /** the client's apiBaseUrl */
  readonly url: string;
  /** the token that is valid now */
  readonly token: string;
  readonly bot: { id: number; username: string };
  /** a user writes to the bot; the Update queued, or update_id -1 when Telegram would not send it (privacy mode, allowed_updates) */
  userMessage(m: UserMessageSpec): Update;
  /** the user presses a button under one of the bot's messages; the Update queued */
  callbackQuery(q: CallbackQuerySpec): Update;
  /** lets the bot write to a chat no user has written from */
  addChat(chat: GroupChat): void;
  /** a stored message as it is now (edits applied) */
  message(chatId: number, messageId: number): Message | undefined;
  readonly sent: SentMessage[];
  /** voice notes the bot sent (sendVoice) */
  readonly voices: VoiceRecord[];
  readonly edits: EditRecord[];
  readonly chatActions: ChatActionRecord[];
  readonly callbackAnswers: CallbackAnswerRecord[];
  readonly commands: BotCommand[];
  /** every request to /bot…/… and /file/…, answered or not */
  readonly calls: CallRecord[];
  /** the highest positive offset any getUpdates sent */
  readonly confirmedOffset: number;
  /** updates not confirmed yet */
  readonly queued: Update[];
  /** a getUpdates is held open waiting for updates */
  readonly polling: boolean;
  /** how many getUpdates answers carried this update */
  deliveries(updateId: number): number;
  /** the next `times` calls of `method` ('*': any Bot API method; 'file': downloads) fail like this */
  fail(method: string, fault: Fault, times?: number): void;
  revokeToken(): void;
  setToken(token: string): void;
  /** resolves once `pred` holds, checked on every call and state change; rejects after timeoutMs */
  waitFor(pred: () => boolean, timeoutMs?: number): Promise<void>;
  /** ends held and hanging requests too */
  close(): Promise<void>;
}

class ApiError extends Error {
  constructor(
    readonly code: number,
    description: string,
    readonly parameters?: { retry_after: number },
  ) {
    super(description);
  }
}
const bad = (what: string): ApiError => new ApiError(400, `Bad Request: ${what}`);
const isObj = (v: unknown): v is Params => typeof v === 'object' && v !== null && !Array.isArray(v);
const int = (v: unknown): number | undefined => (typeof v === 'number' && Number.isInteger(v) ? v : typeof v === 'string' && /^-?\d+$/.test(v.trim()) ? Number(v) : undefined);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : undefined);
const truthy = (v: unknown): boolean => v === true || v === 'true' || v === 1 || v === '1';
function formatText(p: Params): { text: string; entities: MessageEntity[] } {
  try {
    return parseText(str(p.text) ?? '', str(p.parse_mode) ?? '');
  } catch (e) {
    if (e instanceof TextRejected) throw bad(e.message);
    throw e;
  }
}
const now = (): number => Math.floor(Date.now() / 1000);
const snapshot = <T>(v: T): T => structuredClone(v);

const METHODS = ['getMe', 'deleteWebhook', 'setMyCommands', 'getUpdates', 'sendMessage', 'sendVoice', 'editMessageText', 'editMessageReplyMarkup', 'sendChatAction', 'answerCallbackQuery', 'getFile'];
const canonical = (m: string): string => METHODS.find((x) => x.toLowerCase() === m.toLowerCase()) ?? m;
const ACTIONS = new Set(['typing', 'upload_photo', 'record_video', 'upload_video', 'record_voice', 'upload_voice', 'upload_document', 'choose_sticker', 'find_location', 'record_video_note', 'upload_video_note']);
const BUTTON_ACTIONS = ['url', 'callback_data', 'web_app', 'login_url', 'switch_inline_query', 'switch_inline_query_current_chat', 'switch_inline_query_chosen_chat', 'copy_text', 'callback_game', 'pay'];

function jsonParam(p: Params, key: string, what: string): unknown {
  const v = p[key];
  if (typeof v !== 'string') return v;
  if (v === '') return undefined;
  try {
    return JSON.parse(v) as unknown;
  } catch {
    throw bad(`can't parse ${what} JSON object`);
  }
}

function inlineMarkup(p: Params): InlineKeyboardMarkup | undefined {
  const m = jsonParam(p, 'reply_markup', 'reply keyboard markup');
  if (m === undefined || m === null) return undefined;
  if (!isObj(m)) throw bad('object expected as reply markup');
  const rows = m.inline_keyboard;
  // Reply keyboards are accepted but never shown in the returned Message.
  if (rows === undefined) return undefined;
  if (!Array.isArray(rows) || !rows.every((r) => Array.isArray(r))) throw bad('field "inline_keyboard" of the InlineKeyboardMarkup must be an Array of Arrays');
  for (const b of rows.flat() as unknown[]) {
    const why = !isObj(b) ? 'InlineKeyboardButton must be an Object' : typeof b.text !== 'string' ? 'Field "text" must be of type String' : !BUTTON_ACTIONS.some((k) => b[k] !== undefined && b[k] !== '') ? 'Text buttons are unallowed in the inline keyboard' : undefined;
    if (why) throw bad(`can't parse inline keyboard button: ${why}`);
    if (isObj(b) && typeof b.callback_data === 'string' && Buffer.byteLength(b.callback_data) > 64) throw bad('BUTTON_DATA_INVALID');
  }
  return { inline_keyboard: rows } as InlineKeyboardMarkup;
}

function parseParams(url: URL, contentType: string, body: string): Params {
  const params: Params = Object.fromEntries(url.searchParams);
  if (!body) return params;
  if (contentType.includes('application/json')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      throw bad("can't parse JSON object");
    }
    if (isObj(parsed)) Object.assign(params, parsed);
  } else if (contentType.includes('application/x-www-form-urlencoded')) Object.assign(params, Object.fromEntries(new URLSearchParams(body)));
  return params;
}

interface ChatState { chat: GroupChat; next: number; messages: Map<number, Message>; topics: Set<number> }
/** An uploaded file of a multipart request, as a param's value. */
export interface Upload { fileName: string; bytes: Buffer }

/** multipart/form-data: text fields as strings, files as Upload (parsed by the platform's own parser). */
async function parseMultipart(url: URL, contentType: string, body: Buffer): Promise<Params> {
  const params: Params = Object.fromEntries(url.searchParams);
  let form: FormData;
  try {
    form = await new Response(new Uint8Array(body), { headers: { 'content-type': contentType } }).formData();
  } catch {
    throw bad("can't parse multipart/form-data");
  }
  for (const [k, v] of form) params[k] = typeof v === 'string' ? v : ({ fileName: v.name, bytes: Buffer.from(await v.arrayBuffer()) } satisfies Upload);
  return params;
}

/** OGG pages ("OggS") whose first packet is an Opus header ("OpusHead"): what Telegram plays as a voice note. */
export const isOggOpus = (b: Buffer): boolean => b.subarray(0, 4).toString('latin1') === 'OggS' && b.subarray(0, 200).includes('OpusHead');

export async function startTelegramApi(opts: TelegramApiOptions = {}): Promise<TelegramApi> {
  let token = opts.token ?? DEFAULT_TOKEN;
  let tokenValid = true;
  const username = opts.username ?? 'pinclaw_test_bot';
  const botUser: User = { id: int(token.split(':')[0]) ?? 123456, is_bot: true, first_name: opts.firstName ?? 'Pinclaw', username };
  const privacyMode = opts.privacyMode ?? true;
  const chats = new Map<number, ChatState>();
  const files = new Map<string, { bytes: Buffer; uniqueId: string; path: string }>();
  const pendingQueries = new Set<string>();
  const history = new Map<number, { update: Update; deliveries: number }>();
  let queue: Update[] = [];
  let nextUpdateId = opts.updateIdBase ?? 1000;
  let allowedUpdates: string[] = [];
  let confirmedOffset = 0;
  let poll: { res: ServerResponse; call: CallRecord; limit: number; timer: NodeJS.Timeout; waking: boolean } | undefined;
  const faults: { method: string; fault: Fault; left: number }[] = [];
  type Waiter = { pred: () => boolean; resolve: () => void; reject: (e: Error) => void; timer: NodeJS.Timeout };
  const waiters = new Set<Waiter>();
  const sockets = new Set<Socket>();
  let fileCount = 0;
  const sent: SentMessage[] = [];
  const voices: VoiceRecord[] = [];
  const edits: EditRecord[] = [];
  const chatActions: ChatActionRecord[] = [];
  const callbackAnswers: CallbackAnswerRecord[] = [];
  const commands: BotCommand[] = [];
  const calls: CallRecord[] = [];

  const check = (w: Waiter): void => {
    try {
      if (!w.pred()) return;
      w.resolve();
    } catch (e) {
      w.reject(e instanceof Error ? e : new Error(String(e)));
    }
    clearTimeout(w.timer);
    waiters.delete(w);
  };
  const notify = (): void => waiters.forEach(check);

  function send(res: ServerResponse, call: CallRecord | undefined, status: number, body: string | Buffer, type = 'application/json'): void {
    if (call) call.status = status;
    if (res.writableEnded || res.destroyed) return;
    res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
    res.end(body);
  }
  const ok = (res: ServerResponse, call: CallRecord, result: unknown): void => send(res, call, 200, JSON.stringify({ ok: true, result }));
  const fail = (res: ServerResponse, call: CallRecord | undefined, e: ApiError): void =>
    send(res, call, e.code, JSON.stringify({ ok: false, error_code: e.code, description: e.message, ...(e.parameters ? { parameters: e.parameters } : {}) }));

  function chatOf(p: Params): ChatState {
    const v = p.chat_id;
    if (v === undefined || v === '') throw bad('chat_id is empty');
    const id = int(v);
    const st = id !== undefined ? chats.get(id) : [...chats.values()].find((c) => c.chat.username && `@${c.chat.username}` === v);
    if (!st) throw bad('chat not found');
    return st;
  }
  function ensureChat(chat: GroupChat): ChatState {
    const st = chats.get(chat.id) ?? { chat, next: 1, messages: new Map<number, Message>(), topics: new Set<number>() };
    chats.set(chat.id, st);
    return st;
  }
  function botMessageOf(p: Params, notFound: string): Message {
    const st = chatOf(p);
    const id = int(p.message_id);
    const msg = id === undefined ? undefined : st.messages.get(id);
    if (!msg) throw bad(notFound);
    if (msg.from?.id !== botUser.id) throw bad("message can't be edited");
    return msg;
  }
  const replyCopy = (m: Message): Message & { reply_to_message: undefined } => ({ ...snapshot(m), reply_to_message: undefined });
  const userOf = (u: UserSpec): User => ({ id: u.id, is_bot: false, first_name: u.first_name ?? u.username ?? `user${u.id}`, ...(u.last_name ? { last_name: u.last_name } : {}), ...(u.username ? { username: u.username } : {}) });
  function storeFile(bytes: Buffer, dir: string, ext: string): { file_id: string; file_unique_id: string; file_size: number } {
    const fileId = `${dir === 'photos' ? 'AgAC' : 'BQAC'}AgIAAxkBAAI${randomBytes(18).toString('base64url')}`;
    const uniqueId = `AQAD${randomBytes(6).toString('base64url')}`;
    files.set(fileId, { bytes, uniqueId, path: `${dir}/file_${fileCount++}${ext}` });
    return { file_id: fileId, file_unique_id: uniqueId, file_size: bytes.length };
  }

  /** undefined when allowed_updates excludes the type: Telegram never creates such an update */
  function enqueue(type: string, build: (id: number) => Update): Update | undefined {
    if (allowedUpdates.length && !allowedUpdates.includes(type)) return undefined;
    const update = build(nextUpdateId++);
    history.set(update.update_id, { update, deliveries: 0 });
    queue.push(update);
    if (poll && !poll.waking) {
      poll.waking = true;
      setImmediate(answerPoll);
    }
    notify();
    return update;
  }
  function deliver(res: ServerResponse, call: CallRecord, limit: number): void {
    const batch = queue.slice(0, limit);
    for (const u of batch) {
      const h = history.get(u.update_id);
      if (h) h.deliveries++;
    }
    ok(res, call, batch);
  }
  function answerPoll(): void {
    if (!poll) return;
    const p = poll;
    poll = undefined;
    clearTimeout(p.timer);
    deliver(p.res, p.call, p.limit);
    notify();
  }
  function endPoll(e: ApiError): void {
    if (!poll) return;
    clearTimeout(poll.timer);
    fail(poll.res, poll.call, e);
    poll = undefined;
  }

  function getUpdates(p: Params, res: ServerResponse, call: CallRecord): void {
    const offset = int(p.offset) ?? 0;
    const limit = Math.min(100, Math.max(1, int(p.limit) ?? 100));
    const timeout = Math.min(50, Math.max(0, int(p.timeout) ?? 0));
    const allowed = jsonParam(p, 'allowed_updates', 'allowed updates');
    if (Array.isArray(allowed)) allowedUpdates = allowed.filter((a): a is string => typeof a === 'string');
    if (offset > 0) {
      queue = queue.filter((u) => u.update_id >= offset);
      confirmedOffset = Math.max(confirmedOffset, offset);
    } else if (offset < 0) queue = queue.slice(offset);
    if (queue.length || timeout === 0) return deliver(res, call, limit);
    endPoll(new ApiError(409, CONFLICT));
    poll = { res, call, limit, timer: setTimeout(answerPoll, timeout * 1000), waking: false };
    res.on('close', () => {
      if (poll?.res !== res) return;
      clearTimeout(poll.timer);
      poll = undefined;
      notify();
    });
  }

  /** message_thread_id as the server checks it: a topic of a forum, else "message thread not found". */
  function threadOf(p: Params, st: ChatState): number | undefined {
    const id = int(p.message_thread_id);
    if (id === undefined) return undefined;
    if (!st.topics.has(id)) throw bad('message thread not found');
    return id;
  }
  function sendMessage(p: Params): Message {
    const st = chatOf(p);
    const threadId = threadOf(p, st);
    const f = formatText(p);
    const rp = jsonParam(p, 'reply_parameters', 'reply parameters');
    const replyId = int(isObj(rp) ? rp.message_id : undefined) ?? int(p.reply_to_message_id);
    const target = replyId === undefined ? undefined : st.messages.get(replyId);
    if (replyId !== undefined && !target && !truthy(isObj(rp) ? rp.allow_sending_without_reply : p.allow_sending_without_reply)) throw bad('message to be replied not found');
    const markup = inlineMarkup(p);
    const msg: Message = { message_id: st.next++, from: botUser, chat: st.chat, date: now(), text: f.text };
    if (threadId !== undefined) Object.assign(msg, { message_thread_id: threadId, is_topic_message: true });
    if (f.entities.length) msg.entities = f.entities;
    if (target) msg.reply_to_message = replyCopy(target);
    if (markup) msg.reply_markup = markup;
    const lpo = jsonParam(p, 'link_preview_options', 'link preview options');
    if (isObj(lpo)) msg.link_preview_options = lpo;
    st.messages.set(msg.message_id, msg);
    sent.push({ chatId: st.chat.id, messageId: msg.message_id, text: f.text, threadId, parseMode: str(p.parse_mode), entities: msg.entities, replyMarkup: markup, replyToMessageId: target?.message_id, params: p, at: Date.now() });
    return msg;
  }
  function sendVoice(p: Params): Message {
    const st = chatOf(p);
    const threadId = threadOf(p, st);
    const up = p.voice;
    if (up === undefined || up === '') throw bad('there is no voice in the request');
    if (typeof up === 'string') throw bad('wrong remote file identifier specified: Wrong string length');
    const bytes = (up as Upload).bytes;
    if (!isOggOpus(bytes)) throw bad('VOICE_MESSAGES_FORBIDDEN: the stand-in takes only OGG/Opus as a voice note');
    const rp = jsonParam(p, 'reply_parameters', 'reply parameters');
    const replyId = int(isObj(rp) ? rp.message_id : undefined);
    const target = replyId === undefined ? undefined : st.messages.get(replyId);
    const duration = int(p.duration);
    const msg: Message = { message_id: st.next++, from: botUser, chat: st.chat, date: now(), voice: { ...storeFile(bytes, 'voice', '.oga'), duration: duration ?? 0, mime_type: 'audio/ogg' } };
    if (threadId !== undefined) Object.assign(msg, { message_thread_id: threadId, is_topic_message: true });
    if (target) msg.reply_to_message = replyCopy(target);
    st.messages.set(msg.message_id, msg);
    voices.push({ chatId: st.chat.id, messageId: msg.message_id, bytes, duration, replyToMessageId: target?.message_id, threadId, at: Date.now() });
    return msg;
  }
  const NOT_MODIFIED = 'message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message';
  const same = (a: unknown, b: unknown): boolean => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
  function edit(p: Params, method: EditRecord['method']): Message {
    const msg = botMessageOf(p, 'message to edit not found');
    const f = method === 'editMessageText' ? formatText(p) : { text: msg.text ?? '', entities: msg.entities ?? [] };
    const markup = inlineMarkup(p);
    if (f.text === msg.text && same(f.entities, msg.entities ?? []) && same(markup, msg.reply_markup)) throw bad(NOT_MODIFIED);
    msg.text = f.text;
    if (f.entities.length) msg.entities = f.entities;
    else delete msg.entities;
    // Editing without reply_markup drops the keyboard, as Telegram does.
    if (markup) msg.reply_markup = markup;
    else delete msg.reply_markup;
    msg.edit_date = now();
    edits.push({ method, chatId: msg.chat.id, messageId: msg.message_id, text: f.text, parseMode: str(p.parse_mode), replyMarkup: markup, params: p, at: Date.now() });
    return msg;
  }

  const handlers: Record<string, (p: Params) => unknown> = {
    getMe: (): UserFromGetMe => ({
      ...(botUser as User & { is_bot: true; username: string }),
      can_join_groups: opts.canJoinGroups ?? true,
      can_read_all_group_messages: !privacyMode,
      supports_inline_queries: false,
      can_connect_to_business: false,
      has_main_web_app: false,
      has_topics_enabled: false,
      allows_users_to_create_topics: false,
      can_manage_bots: false,
      supports_join_request_queries: false,
    }),
    deleteWebhook: () => true,
    setMyCommands: (p) => {
      const list = jsonParam(p, 'commands', 'commands');
      if (!Array.isArray(list)) throw bad("can't parse commands JSON object");
      const next: BotCommand[] = [];
      for (const c of list as unknown[]) {
        const command = (isObj(c) ? (str(c.command) ?? '') : '').trim().replace(/^\//, '');
        const description = (isObj(c) ? (str(c.description) ?? '') : '').trim();
        if (!command) throw bad('command must be non-empty');
        if (command.length > 32) throw bad('command length must not exceed 32');
        if (!/^[a-z0-9_]+$/.test(command)) throw bad('BOT_COMMAND_INVALID');
        if (!description) throw bad('command description must be non-empty');
        if (description.length > 256) throw bad('command description length must not exceed 256');
        next.push({ command, description });
      }
      commands.splice(0, commands.length, ...next);
      return true;
    },
    sendMessage: (p) => snapshot(sendMessage(p)),
    sendVoice: (p) => snapshot(sendVoice(p)),
    editMessageText: (p) => snapshot(edit(p, 'editMessageText')),
    editMessageReplyMarkup: (p) => snapshot(edit(p, 'editMessageReplyMarkup')),
    sendChatAction: (p) => {
      const st = chatOf(p);
      const action = str(p.action) ?? '';
      if (!ACTIONS.has(action)) throw bad('wrong parameter action in request');
      chatActions.push({ chatId: st.chat.id, action, threadId: threadOf(p, st), at: Date.now() });
      return true;
    },
    answerCallbackQuery: (p) => {
      const id = str(p.callback_query_id) ?? '';
      if (!pendingQueries.delete(id)) throw bad('query is too old and response timeout expired or query ID is invalid');
      callbackAnswers.push({ callbackQueryId: id, text: str(p.text), showAlert: p.show_alert === undefined ? undefined : truthy(p.show_alert), params: p, at: Date.now() });
      return true;
    },
    getFile: (p): File => {
      const id = str(p.file_id) ?? '';
      const f = files.get(id);
      if (!f) throw bad('invalid file_id');
      if (f.bytes.length > MAX_DOWNLOAD) throw bad('file is too big');
      return { file_id: id, file_unique_id: f.uniqueId, file_size: f.bytes.length, file_path: f.path };
    },
  };

  function takeFault(method: string, p: Params): Fault | undefined {
    const i = faults.findIndex((f) => (f.method === method || (f.method === '*' && method !== 'file')) && !('kind' in f.fault && f.fault.kind === 'parse-error' && !str(p.parse_mode)));
    const f = faults[i];
    if (!f) return undefined;
    if (--f.left <= 0) faults.splice(i, 1);
    return f.fault;
  }
  function applyFault(fault: Fault, req: IncomingMessage, res: ServerResponse, call: CallRecord): void {
    if ('kind' in fault) {
      call.fault = fault.kind;
      if (fault.kind === 'hang') return;
      if (fault.kind === 'reset') return void req.socket.destroy();
      return send(res, call, 400, JSON.stringify({ ok: false, error_code: 400, description: INJECTED_PARSE_ERROR }));
    }
    call.fault = String(fault.status);
    if (fault.status === 502) return send(res, call, 502, NGINX_502, 'text/html');
    if (fault.status === 429) return fail(res, call, new ApiError(429, `Too Many Requests: retry after ${fault.retryAfter}`, { retry_after: fault.retryAfter }));
    fail(res, call, new ApiError(fault.status, fault.status === 409 ? CONFLICT : fault.status === 401 ? 'Unauthorized' : 'Internal Server Error'));
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const file = /^\/file\/bot([^/]+)\/(.+)$/.exec(url.pathname);
    const api = /^\/bot([^/]+)\/([^/]*)$/.exec(url.pathname);
    const route = file ?? api;
    if (!route) return fail(res, undefined, new ApiError(404, 'Not Found'));
    const call: CallRecord = { method: file ? 'file' : canonical(api?.[2] ?? ''), params: file ? { path: decodeURIComponent(file[2] ?? '') } : {}, at: Date.now() };
    calls.push(call);
    try {
      const type = req.headers['content-type'] ?? '';
      if (!file) call.params = type.includes('multipart/form-data') ? await parseMultipart(url, type, Buffer.concat(chunks)) : parseParams(url, type, Buffer.concat(chunks).toString('utf8'));
      if (!tokenValid || decodeURIComponent(route[1] ?? '') !== token) throw new ApiError(401, 'Unauthorized');
      const fault = takeFault(call.method, call.params);
      if (fault) return applyFault(fault, req, res, call);
      if (file) {
        const f = [...files.values()].find((x) => x.path === call.params.path);
        if (!f) throw new ApiError(404, 'Not Found');
        return send(res, call, 200, f.bytes, 'application/octet-stream');
      }
      if (call.method === 'getUpdates') return getUpdates(call.params, res, call);
      const handler = handlers[call.method];
      if (!handler) throw new ApiError(404, 'Not Found');
      ok(res, call, handler(call.params));
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      fail(res, call, e);
    } finally {
      notify();
    }
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => send(res, undefined, 500, JSON.stringify({ ok: false, error_code: 500, description: `Internal Server Error: stand-in bug: ${String(e)}` })));
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    get token() {
      return token;
    },
    bot: { id: botUser.id, username },
    userMessage(m) {
      const type = m.topicId !== undefined ? 'supergroup' : (m.chatType ?? 'private');
      const from = userOf(m.from);
      const id = m.chatId ?? (type === 'private' ? m.from.id : type === 'group' ? -4000000001 : -1001000000001);
      const fresh: GroupChat =
        type === 'private' ? { id, type, first_name: from.first_name, ...(from.username ? { username: from.username } : {}) }
        : type === 'supergroup' && m.topicId !== undefined ? { id, type, title: m.chatTitle ?? 'Test forum', is_forum: true }
        : { id, type, title: m.chatTitle ?? 'Test group' };
      const st = ensureChat(fresh);
      if (m.topicId !== undefined && !st.topics.has(m.topicId)) {
        if (!('is_forum' in st.chat && st.chat.is_forum)) throw new Error(`userMessage: chat ${id} is not a forum`);
        if (st.messages.has(m.topicId)) throw new Error(`userMessage: message ${m.topicId} of chat ${id} exists and cannot start a topic`);
        st.topics.add(m.topicId);
        st.next = Math.max(st.next, m.topicId + 1);
        const root = { message_id: m.topicId, from: m.topicByBot ? botUser : from, chat: st.chat, date: now(), message_thread_id: m.topicId, is_topic_message: true, forum_topic_created: { name: `Topic ${m.topicId}`, icon_color: 7322096 } };
        st.messages.set(m.topicId, root as Message);
      }
      const body = m.text ?? m.caption;
      const text = m.mentionBot ? `@${username}${body ? ` ${body}` : ''}` : body;
      const msg: Message & Update.NonChannel = { message_id: st.next++, from, chat: st.chat, date: now() };
      if (m.topicId !== undefined) Object.assign(msg, { message_thread_id: m.topicId, is_topic_message: true });
      if (m.photo) {
        const w = m.photo.width ?? 1280;
        const h = m.photo.height ?? 960;
        // Telegram sends several sizes, largest last; the thumbnail's bytes differ so picking [0] shows.
        msg.photo = [
          { ...storeFile(m.photo.bytes.subarray(0, Math.min(m.photo.bytes.length, 64)), 'photos', '.jpg'), width: 90, height: Math.round((90 * h) / w) },
          { ...storeFile(m.photo.bytes, 'photos', '.jpg'), width: w, height: h },
        ];
      }
      if (m.document) {
        const ext = /\.[A-Za-z0-9]+$/.exec(m.document.fileName)?.[0] ?? '';
        msg.document = { ...storeFile(m.document.bytes, 'documents', ext), file_name: m.document.fileName, mime_type: m.document.mimeType };
      }
      if (m.voice) msg.voice = { ...storeFile(m.voice.bytes, 'voice', '.oga'), duration: m.voice.duration, mime_type: 'audio/ogg' };
      const media = Boolean(m.photo || m.document || m.voice);
      if (text !== undefined) {
        const entities = detectEntities(text);
        if (media) msg.caption = text;
        else msg.text = text;
        if (entities.length) msg[media ? 'caption_entities' : 'entities'] = entities;
      }
      if (m.replyToBotMessageId !== undefined) {
        const target = st.messages.get(m.replyToBotMessageId);
        if (!target) throw new Error(`userMessage: no message ${m.replyToBotMessageId} in chat ${id}`);
        msg.reply_to_message = replyCopy(target);
      } else if (m.topicId !== undefined) {
        msg.reply_to_message = replyCopy(st.messages.get(m.topicId)!);
      }
      st.messages.set(msg.message_id, msg);
      const command = /^\/[a-zA-Z0-9_]+(?:@([a-zA-Z0-9_]+))?/.exec(text ?? '');
      const visible =
        type === 'private' ||
        !privacyMode ||
        (command !== null && (!command[1] || command[1].toLowerCase() === username.toLowerCase())) ||
        msg.reply_to_message?.from?.id === botUser.id ||
        (msg.entities ?? msg.caption_entities ?? []).some((e) => e.type === 'mention' && text?.slice(e.offset + 1, e.offset + e.length).toLowerCase() === username.toLowerCase());
      const queued = visible ? enqueue('message', (update_id) => ({ update_id, message: snapshot(msg) })) : undefined;
      return queued ?? { update_id: -1, message: snapshot(msg) };
    },
    callbackQuery(q) {
      const msg = chats.get(q.chatId)?.messages.get(q.messageId);
      if (!msg || msg.from?.id !== botUser.id) throw new Error(`callbackQuery: no bot message ${q.messageId} in chat ${q.chatId}`);
      const query: CallbackQuery = { id: BigInt.asUintN(63, randomBytes(8).readBigUInt64BE()).toString(), from: userOf(q.from), message: snapshot(msg), chat_instance: String(-q.chatId * 7919), data: q.data };
      pendingQueries.add(query.id);
      return enqueue('callback_query', (update_id) => ({ update_id, callback_query: query })) ?? { update_id: -1, callback_query: query };
    },
    addChat: (chat) => void ensureChat(chat),
    message: (chatId, messageId) => chats.get(chatId)?.messages.get(messageId),
    sent,
    voices,
    edits,
    chatActions,
    callbackAnswers,
    commands,
    calls,
    get confirmedOffset() {
      return confirmedOffset;
    },
    get queued() {
      return [...queue];
    },
    get polling() {
      return poll !== undefined;
    },
    deliveries: (id) => history.get(id)?.deliveries ?? 0,
    fail(method, fault, times = 1) {
      faults.push({ method: method === '*' || method === 'file' ? method : canonical(method), fault, left: times });
    },
    revokeToken() {
      tokenValid = false;
      endPoll(new ApiError(401, 'Unauthorized'));
      notify();
    },
    setToken(t) {
      token = t;
      tokenValid = true;
      notify();
    },
    waitFor(pred, timeoutMs = 5000) {
      return new Promise<void>((resolve, reject) => {
        const w: Waiter = {
          pred,
          resolve,
          reject,
          timer: setTimeout(() => {
            waiters.delete(w);
            const recent = calls.slice(-8).map((c) => `${c.method}→${c.fault ?? c.status ?? 'open'}`);
            reject(new Error(`waitFor: not true after ${timeoutMs} ms (last calls: ${recent.join(', ') || 'none'})`));
          }, timeoutMs),
        };
        waiters.add(w);
        check(w);
      });
    },
    close() {
      if (poll) clearTimeout(poll.timer);
      poll = undefined;
      for (const w of waiters) {
        clearTimeout(w.timer);
        w.reject(new Error('waitFor: the Telegram stand-in was closed'));
      }
      waiters.clear();
      for (const s of sockets) s.destroy();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}
