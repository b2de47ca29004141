// The configuration schema: one declarative tree that validation, environment overrides, `config
// get/set` and the docs all read, so a new key is described once and every consumer follows.
// PinclawConfig is inferred from the tree for the same reason: adding a section to `sections`
// below is the whole change.

interface FieldBase {
  description: string;
  /** Set on values that must never be echoed back (tokens, keys). */
  secret?: true;
}

export interface StringField extends FieldBase { kind: 'string'; default?: string }
export interface IntegerField extends FieldBase { kind: 'integer'; min?: number; max?: number; default?: number }
export interface NumberField extends FieldBase { kind: 'number'; min?: number; max?: number; default?: number }
export interface BooleanField extends FieldBase { kind: 'boolean'; default?: boolean }
export interface EnumField extends FieldBase { kind: 'enum'; values: readonly string[]; default?: string }
export interface ObjectField extends FieldBase { kind: 'object'; fields: Readonly<Record<string, Field>>; default?: Record<string, unknown> }
export interface ArrayField extends FieldBase { kind: 'array'; items: Field; default?: unknown[] }
/**
 * A map whose keys the owner chooses (mcp.servers.<name>): every value is checked against `values`,
 * and errors name the key (mcp.servers.home.command). Keys must match NAME_KEY.
 */
export interface RecordField extends FieldBase { kind: 'record'; values: Field; default?: Record<string, unknown> }

export type Field = StringField | IntegerField | NumberField | BooleanField | EnumField | ObjectField | ArrayField | RecordField;

/** What a key of a record may be: the names end up in tool names and in dot paths. */
export const RECORD_KEY = /^[A-Za-z][A-Za-z0-9_-]{0,31}$/;
export type FieldKind = Field['kind'];

/** How many turns one hardware trigger (a GPIO line, a camera) may start: its `rateLimit`. */
const triggerRateLimit = {
  kind: 'object',
  description: 'turns this trigger may start',
  fields: {
    max: { kind: 'integer', min: 1, default: 6, description: 'turns within perSeconds' },
    perSeconds: { kind: 'integer', min: 1, default: 60, description: 'the window of max, in seconds' },
  },
} as const satisfies Field;

/** One command hook (docs/hooks.md): the contract of Claude Code's hooks, run in the sandbox. */
const hookList = (what: string) => ({
  kind: 'array',
  items: {
    kind: 'object',
    description: 'one command hook',
    fields: {
      matcher: { kind: 'string', default: '', description: 'tool names it applies to (tool events only): empty or * for all, an exact name, names separated by |, or else a regular expression tested against the name (as Claude Code does)' },
      command: { kind: 'string', description: 'the shell command (/bin/sh -c, in the sandbox, from the workspace); the event as JSON on its stdin (required)' },
      timeoutMs: { kind: 'integer', min: 100, max: 600000, default: 10000, description: 'killed with its process group after this long; then onFailure applies' },
      onFailure: { kind: 'enum', values: ['block', 'continue'], description: 'what a crash (an exit other than 0 and 2), a timeout or unreadable output means; unset: block for PreToolUse and HardwareTrigger (fail closed), continue for the others' },
    },
  },
  default: [],
  description: what,
}) as const satisfies Field;

const sections = {
  gateway: {
    kind: 'object',
    description: 'the HTTP gateway',
    fields: {
      host: { kind: 'string', default: '127.0.0.1', description: 'address the gateway binds' },
      port: { kind: 'integer', min: 0, max: 65535, default: 7420, description: 'TCP port the gateway listens on (0 picks a free port)' },
      token: { kind: 'string', secret: true, description: 'bearer token for /api routes, /metrics and the dashboard login; without one they answer 401, and the gateway refuses to bind an address other than loopback' },
      rateLimit: {
        kind: 'object',
        description: 'requests one client (address) may make',
        fields: {
          perSecond: { kind: 'integer', min: 1, default: 50, description: 'sustained requests per second per client' },
          burst: { kind: 'integer', min: 1, default: 100, description: 'requests a client may make at once before the rate applies' },
          maxBadTokens: { kind: 'integer', min: 1, default: 10, description: 'wrong tokens within a minute before the client (an IPv4 address, or an IPv6 /64) is locked out (5 minutes, doubling to an hour)' },
          maxBadTokensTotal: { kind: 'integer', min: 1, default: 30, description: 'wrong tokens within a minute from all clients together before token logins are paused (5 minutes, doubling to an hour) for every client that has not given the right token within a day; a logged-in dashboard keeps working' },
        },
      },
      connections: {
        kind: 'object',
        description: 'connections the gateway holds open (docs/channels.md#the-gateways-defences)',
        fields: {
          max: { kind: 'integer', min: 1, description: 'connections held at once; more are closed on arrival. Unset: 256, or half the open-files limit when that is lower (the other half stays for the database, model calls and devices)' },
          perAddress: { kind: 'integer', min: 1, description: 'connections one client (an IPv4 address, or an IPv6 /64) may hold; unset: a quarter of max' },
          firstRequestSeconds: { kind: 'integer', min: 1, max: 300, default: 10, description: 'a connection that has not sent a whole request (its headers) within this many seconds is closed' },
        },
      },
    },
  },
  log: {
    kind: 'object',
    description: 'logging',
    fields: {
      level: { kind: 'enum', values: ['debug', 'info', 'warn', 'error'], default: 'info', description: 'least severe level that is written' },
    },
  },
  store: {
    kind: 'object',
    description: 'the SQLite store',
    fields: {
      busyTimeoutMs: { kind: 'integer', min: 0, default: 5000, description: 'how long a write waits for a locked database, in milliseconds' },
      diskWarnMb: { kind: 'integer', min: 1, default: 256, description: 'doctor warns when the file system of the home has less than this many MiB free (turns cannot be saved on a full one)' },
    },
  },
  native: {
    kind: 'object',
    description: 'native addons',
    fields: {
      enabled: { kind: 'boolean', default: true, description: 'false forces the pure-TypeScript fallbacks' },
    },
  },
  providers: {
    kind: 'object',
    description: 'model providers; ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, OPENAI_API_KEY and OPENAI_BASE_URL are read when these are unset',
    fields: {
      anthropic: {
        kind: 'object',
        description: 'Anthropic Messages API',
        fields: {
          apiKey: { kind: 'string', secret: true, description: 'API key (else ANTHROPIC_API_KEY)' },
          baseUrl: { kind: 'string', description: 'API base URL (else ANTHROPIC_BASE_URL, else the SDK default)' },
        },
      },
      openai: {
        kind: 'object',
        description: 'an OpenAI-compatible chat completions API (OpenAI, Ollama, llama.cpp server, OpenRouter, vLLM)',
        fields: {
          apiKey: { kind: 'string', secret: true, description: 'API key (else OPENAI_API_KEY); local servers may need none' },
          baseUrl: { kind: 'string', description: 'base URL including /v1 (else OPENAI_BASE_URL, else https://api.openai.com/v1)' },
          images: { kind: 'boolean', default: true, description: 'the model takes images (image_url parts); false: photos and snapshots reach it as a text note naming the saved file' },
        },
      },
    },
  },
  agent: {
    kind: 'object',
    description: 'the agent loop',
    fields: {
      model: { kind: 'string', default: 'anthropic/claude-sonnet-5-5', description: 'primary model as provider/model' },
      fallbacks: { kind: 'array', items: { kind: 'string', description: 'provider/model' }, default: [], description: 'models tried in order when the primary fails' },
      fallback: {
        kind: 'object',
        description: 'a local OpenAI-compatible server (Ollama, llama.cpp) asked only when no provider of agent.model and agent.fallbacks can be reached (DNS, connect, timeout); never after an error response',
        fields: {
          model: { kind: 'string', description: 'the local model, as the server names it (e.g. llama3)' },
          baseUrl: { kind: 'string', description: 'the server\'s base URL including /v1 (e.g. http://192.168.1.20:11434/v1)' },
          apiKey: { kind: 'string', secret: true, description: 'bearer key, if the local server needs one' },
        },
      },
      maxTokens: { kind: 'integer', min: 1, default: 4096, description: 'output-token limit of one provider call' },
      maxIterations: { kind: 'integer', min: 1, default: 20, description: 'tool-use rounds before the model is asked for a final answer' },
      requestTimeoutMs: { kind: 'integer', min: 1, default: 120000, description: 'timeout of one provider request' },
      retries: { kind: 'integer', min: 0, default: 3, description: 'retries per provider on 429, 529, 5xx and network errors' },
      retryBaseMs: { kind: 'integer', min: 0, default: 1000, description: 'first retry delay; doubles each retry, with jitter' },
      retryMaxMs: { kind: 'integer', min: 0, default: 30000, description: 'longest retry delay (a longer retry-after moves on to the fallback)' },
      contextWindow: { kind: 'integer', min: 1000, default: 200000, description: "the model's context window in tokens" },
      compactAt: { kind: 'number', min: 0.1, max: 0.99, default: 0.75, description: 'fraction of the context window that triggers compaction' },
      keepRecent: { kind: 'integer', min: 2, default: 20, description: 'messages kept verbatim by compaction' },
      maxMessageChars: { kind: 'integer', min: 1, default: 32000, description: 'longest accepted inbound message, in characters' },
      timezone: { kind: 'string', description: 'IANA time zone for the prompt (default: the system zone)' },
    },
  },
  web: {
    kind: 'object',
    description: 'the web_fetch and web_search tools',
    fields: {
      allowedHosts: { kind: 'array', items: { kind: 'string', description: 'host name or address' }, default: [], description: 'hosts exempt from the SSRF guard (e.g. a LAN service you trust)' },
      maxBytes: { kind: 'integer', min: 1024, default: 2000000, description: 'largest response body read, in bytes' },
      timeoutMs: { kind: 'integer', min: 100, default: 15000, description: 'connect, headers and body timeout of one request' },
      maxRedirects: { kind: 'integer', min: 0, max: 20, default: 5, description: 'redirects followed, each checked by the SSRF guard' },
      search: {
        kind: 'object',
        description: 'the web_search tool; it exists only when a provider is set (docs/tools.md#web_search)',
        fields: {
          provider: { kind: 'enum', values: ['none', 'brave', 'searxng'], default: 'none', description: 'none: no web_search tool; brave: the Brave Search API (needs apiKey); searxng: a SearXNG instance (needs baseUrl)' },
          apiKey: { kind: 'string', secret: true, default: '', description: 'Brave Search API subscription token' },
          baseUrl: { kind: 'string', default: '', description: 'where the provider answers: for brave empty means https://api.search.brave.com; for searxng the instance, e.g. http://searx.lan:8080 (required). Not checked by the SSRF guard' },
          timeoutMs: { kind: 'integer', min: 100, description: 'connect, headers and body timeout of one search (default: web.timeoutMs)' },
        },
      },
    },
  },
  files: {
    kind: 'object',
    description: 'the file tools: read_file, write_file, edit_file, list_dir, glob, grep (docs/tools.md)',
    fields: {
      roots: { kind: 'array', items: { kind: 'string', description: 'absolute path' }, default: [], description: 'directories the file tools may read and write besides the workspace' },
      readOnlyRoots: { kind: 'array', items: { kind: 'string', description: 'absolute path' }, default: [], description: 'directories the file tools may read but not write; one inside the workspace or a root makes that part read-only' },
      maxReadBytes: { kind: 'integer', min: 1024, default: 65536, description: 'most bytes one read_file call returns, line numbers included; it says which offset to continue from' },
      maxWriteBytes: { kind: 'integer', min: 1, default: 1048576, description: 'largest file write_file writes and edit_file edits, in bytes' },
      maxSearchBytes: { kind: 'integer', min: 1024, default: 1048576, description: 'largest file grep searches, in bytes; larger ones are skipped and counted' },
      maxResults: { kind: 'integer', min: 1, default: 200, description: 'most entries list_dir, paths glob and matches grep return' },
      workspaceQuotaMb: { kind: 'integer', min: 1, default: 1024, description: 'most the workspace may hold, in MiB: write_file and edit_file refuse a write past it, exec does not start over it and is stopped when its writes would pass it (docs/tools.md)' },
    },
  },
  sandbox: {
    kind: 'object',
    description: 'the OS sandbox of the exec tool (docs/sandbox.md)',
    fields: {
      backend: { kind: 'enum', values: ['auto', 'landlock', 'bubblewrap', 'none'], default: 'auto', description: 'auto: Landlock if the kernel and addon offer it, else bubblewrap, else exec is refused; none runs commands unconfined' },
      network: { kind: 'boolean', default: false, description: 'let sandboxed commands open TCP/UDP connections' },
      allowedRoots: { kind: 'array', items: { kind: 'string', description: 'absolute path' }, default: [], description: 'extra directories commands may read and execute from (the workspace is always read-write)' },
      cpuSeconds: { kind: 'integer', min: 1, default: 60, description: 'CPU time per process (RLIMIT_CPU)' },
      memoryMb: { kind: 'integer', min: 16, default: 1024, description: 'address space per process in MiB (RLIMIT_AS)' },
      maxProcesses: { kind: 'integer', min: 1, default: 64, description: 'processes (and threads) a command may have at once' },
      maxFileSizeMb: { kind: 'integer', min: 0, default: 256, description: 'largest file a command may write, in MiB (RLIMIT_FSIZE)' },
      timeoutSeconds: { kind: 'integer', min: 1, max: 86400, default: 60, description: 'longest a command may run before its process group is killed; a call may ask for less' },
      outputCap: { kind: 'integer', min: 1024, default: 32768, description: 'bytes of stdout and stderr kept; the rest is counted and dropped' },
    },
  },
  conductor: {
    kind: 'object',
    description: 'the queue consumer',
    fields: {
      concurrency: { kind: 'integer', min: 1, default: 2, description: 'sessions handled at the same time' },
      maxAttempts: { kind: 'integer', min: 1, default: 5, description: 'attempts of one message before it is marked failed' },
      releaseAfterIdleSeconds: { kind: 'integer', min: 0, max: 86400, default: 60, description: 'seconds without a turn after which the gateway frees what only turns use (the tokenizer\'s and the embedder\'s tables, SQLite\'s cache), loaded again by the next turn; 0 keeps them (docs/operations.md#memory-when-idle)' },
      unloadCodeAfterIdleSeconds: { kind: 'integer', min: 0, max: 86400, default: 900, description: 'seconds without a turn after which the gateway also unloads the code only turns run and that is slow to load again (the Anthropic SDK: 2.3 MiB kept, about 20 ms of the next turn on x64 to load again), so that a conversation whose messages come minutes apart keeps it; 0 keeps it (docs/operations.md#memory-when-idle)' },
    },
  },
  owner: {
    kind: 'object',
    description: 'the owner: where pinclaw tells them things nobody asked for in a chat',
    fields: {
      notify: { kind: 'string', description: "CHANNEL:CHAT that gets what names no target of its own: hardware triggers without a session, cron jobs added without --deliver, the heartbeat without heartbeat.deliver; e.g. telegram:12345 (pinclaw onboard learns it when you message the bot). Unset: those go to the log" },
    },
  },
  heartbeat: {
    kind: 'object',
    description: 'the heartbeat: a periodic turn with the tasks in HEARTBEAT.md (docs/operations.md#heartbeat)',
    fields: {
      every: { kind: 'string', default: '30m', description: 'how often the gateway reads HEARTBEAT.md, a duration such as 30m or 2h; 0 turns the heartbeat off. While the file holds no task (only headings, comments, blank lines) no model is called' },
      session: { kind: 'string', default: 'heartbeat', description: 'the session the heartbeat turns run in' },
      deliver: { kind: 'string', description: 'CHANNEL:CHAT that gets the replies other than HEARTBEAT_OK, e.g. telegram:12345 or mqtt:kitchen; log: they are logged; unset: owner.notify, else logged' },
    },
  },
  channels: {
    kind: 'object',
    description: 'channels',
    fields: {
      cli: {
        kind: 'object',
        description: 'the command line (pinclaw agent)',
        fields: {
          debounceMs: { kind: 'integer', min: 0, default: 0, description: 'messages from one sender within this window are merged' },
        },
      },
      telegram: {
        kind: 'object',
        description: 'the Telegram bot (docs/channels.md); runs in the gateway when token is set',
        fields: {
          token: { kind: 'string', secret: true, description: 'the bot token from @BotFather; unset: no Telegram channel' },
          apiBaseUrl: { kind: 'string', default: 'https://api.telegram.org', description: 'the Bot API endpoint (a local Bot API server, or a test stand-in)' },
          allowFrom: { kind: 'array', items: { kind: 'string', description: 'a Telegram user id, or a username with or without @' }, default: [], description: 'who may talk to the bot; anyone else gets a pairing code the owner approves with pinclaw pairing approve CODE' },
          pollTimeoutSeconds: { kind: 'integer', min: 1, max: 50, default: 30, description: 'how long one getUpdates long poll waits; a poll silent past this plus a grace (a fifth of it, 2-10 s) is abandoned and retried (half-open connections)' },
          debounceMs: { kind: 'integer', min: 0, default: 1500, description: 'messages from one sender within this window are merged into one turn' },
          streaming: { kind: 'boolean', default: true, description: 'show the reply while it is written, by editing a draft message at most once a second' },
          maxFileBytes: { kind: 'integer', min: 1, max: 20971520, default: 20971520, description: 'largest photo or document accepted from the owner (the Bot API serves files up to 20 MB)' },
        },
      },
      signal: {
        kind: 'object',
        description: 'Signal through a signal-cli daemon the owner runs (signal-cli -a ACCOUNT daemon --http HOST:PORT; docs/channels.md); runs in the gateway when url is set',
        fields: {
          url: { kind: 'string', description: 'the daemon\'s HTTP endpoint, e.g. http://127.0.0.1:8080; unset: no Signal channel' },
          account: { kind: 'string', description: 'the Signal account the daemon runs, as E.164 (+4915112345678); required with url' },
          allowFrom: { kind: 'array', items: { kind: 'string', description: 'an E.164 number (+4915112345678) or uuid:<ACI>' }, default: [], description: 'who may talk to the bot; anyone else gets a pairing code the owner approves with pinclaw pairing approve CODE' },
          attachmentsDir: { kind: 'string', description: 'where the daemon stores received attachments; default ~/.local/share/signal-cli/attachments (of the user pinclaw runs as)' },
          maxFileBytes: { kind: 'integer', min: 1, max: 104857600, default: 20971520, description: 'largest attachment copied into the workspace; a larger one is refused with a reply' },
          debounceMs: { kind: 'integer', min: 0, default: 1500, description: 'messages from one sender within this window are merged into one turn' },
        },
      },
      discord: {
        kind: 'object',
        description: 'the Discord bot (gateway v10 and REST; docs/channels.md); runs in the gateway when token is set',
        fields: {
          token: { kind: 'string', secret: true, description: 'the bot token (Developer Portal → your application → Bot); the app needs the Message Content intent enabled there; unset: no Discord channel' },
          apiBaseUrl: { kind: 'string', default: 'https://discord.com/api/v10', description: 'the REST endpoint (a test stand-in); the gateway address comes from its GET /gateway/bot' },
          allowFrom: { kind: 'array', items: { kind: 'string', description: 'a Discord user id (a number like 80351110224678912; Developer Mode → Copy User ID)' }, default: [], description: 'who may talk to the bot; anyone else gets a pairing code in a DM (in a server the bot stays quiet) that the owner approves with pinclaw pairing approve CODE' },
          maxFileBytes: { kind: 'integer', min: 1, max: 104857600, default: 20971520, description: 'largest attachment saved into the workspace; a larger one is refused with a reply' },
          debounceMs: { kind: 'integer', min: 0, default: 1500, description: 'messages from one sender within this window are merged into one turn' },
        },
      },
      matrix: {
        kind: 'object',
        description: 'a Matrix bot account, unencrypted rooms only (docs/channels.md); runs in the gateway when homeserver and accessToken are set',
        fields: {
          homeserver: { kind: 'string', description: 'the client-server URL, e.g. https://matrix.example.org; unset: no Matrix channel' },
          accessToken: { kind: 'string', secret: true, description: 'the bot account\'s access token; required with homeserver' },
          allowFrom: { kind: 'array', items: { kind: 'string', description: 'a user id, @user:server' }, default: [], description: 'who may talk to the bot and whose invites it joins; others get a pairing code in a two-member room' },
          debounceMs: { kind: 'integer', min: 0, default: 1500, description: 'messages from one sender within this window are merged into one turn' },
        },
      },
    },
  },
  tools: {
    kind: 'object',
    description: 'tool policy and limits (docs/tools.md)',
    fields: {
      profile: { kind: 'enum', values: ['minimal', 'standard', 'full'], default: 'standard', description: 'tools allowed by default: minimal (read-only), standard (everyday), full (every tool, also future ones)' },
      allow: { kind: 'array', items: { kind: 'string', description: 'tool name' }, default: [], description: 'tools allowed besides the profile' },
      deny: { kind: 'array', items: { kind: 'string', description: 'tool name, or * for all' }, default: [], description: 'tools never allowed; a deny wins over every allow' },
      overrides: {
        kind: 'array',
        items: {
          kind: 'object',
          description: 'one override',
          fields: {
            channel: { kind: 'string', description: 'channel it applies to (required)' },
            chat: { kind: 'string', description: 'chat id within the channel; without it the whole channel' },
            profile: { kind: 'enum', values: ['minimal', 'standard', 'full'], description: 'profile there instead of tools.profile' },
            allow: { kind: 'array', items: { kind: 'string', description: 'tool name' }, default: [], description: 'tools allowed there' },
            deny: { kind: 'array', items: { kind: 'string', description: 'tool name, or *' }, default: [], description: 'tools denied there' },
          },
        },
        default: [],
        description: 'per-channel and per-chat profile, allow and deny ({"channel":"telegram","chat":"42","deny":["exec"]}); a chat override beats a channel one',
      },
      controlChats: { kind: 'array', items: { kind: 'string', description: 'channel:chatId' }, default: ['cli:local'], description: 'chats (channel:chatId) whose tools may act on other chats, e.g. send_message elsewhere; cli:local is the command line' },
      confirm: { kind: 'array', items: { kind: 'string', description: 'tool name' }, default: [], description: "tools that need the owner's yes before each call, besides those that always ask" },
      physicalMaxAgeSeconds: { kind: 'integer', min: 0, default: 120, description: "a physical action (gpio_write, i2c_write, mcu_call, serial_write) asked for by a message older than this, in seconds (a turn retried after a provider error, or left pending over a restart), runs only after a fresh confirmation from the owner" },
      confirmTimeoutMs: { kind: 'integer', min: 1000, default: 120000, description: 'how long a confirmation asked in a chat (the gateway: POST /api/confirm) waits for an answer before it counts as no' },
      timeoutMs: { kind: 'integer', min: 100, default: 30000, description: 'time limit of one tool call, in milliseconds' },
      maxOutputBytes: { kind: 'integer', min: 256, default: 32768, description: 'longest tool output handed to the model; the rest is cut with a notice' },
      limits: {
        kind: 'array',
        items: {
          kind: 'object',
          description: 'limits of one tool',
          fields: {
            tool: { kind: 'string', description: 'tool name (required)' },
            timeoutMs: { kind: 'integer', min: 100, description: 'its time limit' },
            maxOutputBytes: { kind: 'integer', min: 256, description: 'its output cap' },
          },
        },
        default: [],
        description: 'per-tool timeoutMs and maxOutputBytes ({"tool":"exec","timeoutMs":120000})',
      },
      spawn: {
        kind: 'object',
        description: 'the spawn tool: sub-agents with their own session and fewer tools (docs/tools.md#spawn)',
        fields: {
          maxTurns: { kind: 'integer', min: 1, max: 100, default: 8, description: 'model calls one sub-agent may make; the last one is told to answer without tools' },
          tokenBudget: { kind: 'integer', min: 1000, default: 100000, description: 'tokens one sub-agent may use (input, cached and output, summed over its calls); checked before each call' },
          timeoutMs: { kind: 'integer', min: 1000, default: 180000, description: 'wall-clock limit of one sub-agent, in milliseconds' },
          deny: { kind: 'array', items: { kind: 'string', description: 'tool name' }, default: [], description: 'tools never given to a sub-agent, besides exec and spawn' },
        },
      },
    },
  },
  board: {
    kind: 'object',
    description: 'which board profile describes this machine (docs/hardware.md)',
    fields: {
      profile: { kind: 'string', description: "a board profile id (pinclaw board list) used instead of detection, e.g. rpi-4b; checked by 'config validate' and doctor" },
    },
  },
  hardware: {
    kind: 'object',
    description: 'GPIO lines, their safety limits and hardware triggers (docs/hardware.md)',
    fields: {
      lines: {
        kind: 'array',
        items: {
          kind: 'object',
          description: 'one named line',
          fields: {
            name: { kind: 'string', description: 'the name tools and triggers use, e.g. garage_relay (required, unique)' },
            line: { kind: 'string', description: "the board profile's line, by name or alias, e.g. GPIO17 (required)" },
            activeLow: { kind: 'boolean', default: false, description: 'true: the line is active (on) at the low level' },
            direction: { kind: 'enum', values: ['input', 'output'], description: 'how the line is requested (default: input)' },
            bias: { kind: 'enum', values: ['as-is', 'pull-up', 'pull-down', 'disabled'], description: 'pull resistor (default: as-is, what the line has now)' },
            drive: { kind: 'enum', values: ['push-pull', 'open-drain', 'open-source'], description: 'output drive (default: push-pull)' },
            initial: { kind: 'enum', values: ['active', 'inactive'], description: 'value an output takes when first requested (default: inactive); only with direction output' },
          },
        },
        default: [],
        description: 'named lines ({"name":"garage_relay","line":"GPIO17","activeLow":true,"direction":"output"})',
      },
      confirm: { kind: 'array', items: { kind: 'string', description: 'a hardware.lines name' }, default: [], description: "lines whose writes need the owner's yes first" },
      release: {
        kind: 'array',
        items: {
          kind: 'object',
          description: 'one line taken back from the board profile',
          fields: {
            line: { kind: 'string', description: "the board profile's line, by name or alias, e.g. GPIO14 (required)" },
            reason: { kind: 'string', description: 'why it is safe to use, shown by board detect, doctor and the audit (required)' },
          },
        },
        default: [],
        description: 'reserved lines the owner releases: pinclaw then uses them even when they may be in use ({"line":"GPIO14","reason":"nothing on the UART"})',
      },
      writeRateLimit: {
        kind: 'object',
        description: 'writes allowed to one line, so a runaway loop cannot wear out a relay or a motor',
        fields: {
          perLine: { kind: 'integer', min: 1, default: 30, description: 'writes to one line allowed within perSeconds' },
          perSeconds: { kind: 'integer', min: 1, default: 60, description: 'the window of perLine, in seconds' },
        },
      },
      triggers: {
        kind: 'array',
        items: {
          kind: 'object',
          description: 'one GPIO edge trigger',
          fields: {
            line: { kind: 'string', description: 'a hardware.lines name (required)' },
            edge: { kind: 'enum', values: ['rising', 'falling', 'both'], default: 'both', description: 'which edges start a turn (after activeLow)' },
            debounceMs: { kind: 'integer', min: 0, max: 60000, default: 50, description: 'edges closer than this to the previous one are ignored' },
            action: { kind: 'enum', values: ['turn', 'notify'], default: 'turn', description: 'turn: the agent gets message and answers (a model call); notify: text is sent as it is, no model call' },
            session: { kind: 'string', description: 'the session that gets the message; a CHANNEL:CHAT session (telegram:12345) is answered in that chat. Unset: owner.notify (required without it)' },
            message: { kind: 'string', description: 'the system message the agent receives (required with action turn)' },
            text: { kind: 'string', description: 'what action notify sends to the session\'s chat (a CHANNEL:CHAT session) or else owner.notify; {line}, {edge}, {value} (on/off), {time} are filled in (required with action notify)' },
            rateLimit: triggerRateLimit,
            adc: {
              kind: 'object',
              description: 'for an analog pin of a board on a serial port ("bench:A0"): the band whose crossings are the edges (rising: above high, falling: below low), checked by the firmware',
              fields: {
                low: { kind: 'integer', min: 0, max: 65535, description: 'a reading below this is a falling edge' },
                high: { kind: 'integer', min: 0, max: 65535, description: 'a reading above this is a rising edge' },
                intervalMs: { kind: 'integer', min: 1, max: 65535, default: 100, description: 'how often the firmware reads the pin' },
              },
            },
          },
        },
        default: [],
        description: 'GPIO edges that start an agent turn or send a fixed text ({"line":"doorbell","edge":"falling","debounceMs":50,"message":"the doorbell rang"}, {"line":"door","action":"notify","text":"door {value} at {time}"})',
      },
      sensorTriggers: {
        kind: 'array',
        items: {
          kind: 'object',
          description: 'one polled I2C sensor threshold',
          fields: {
            bus: { kind: 'integer', min: 0, description: 'I2C bus number, /dev/i2c-N (required)' },
            address: { kind: 'integer', min: 3, max: 119, description: '7-bit device address, 0x03-0x77 (required)' },
            register: { kind: 'integer', min: 0, max: 255, description: 'register read each time (required)' },
            length: { kind: 'integer', min: 1, max: 4, default: 1, description: 'bytes read, as one unsigned big-endian number' },
            intervalMs: { kind: 'integer', min: 100, default: 10000, description: 'how often the register is read' },
            above: { kind: 'number', description: 'start a turn when the value rises above this' },
            below: { kind: 'number', description: 'start a turn when the value falls below this' },
            hysteresis: { kind: 'number', min: 0, default: 0, description: 'how far back the value must come before the trigger can fire again' },
            action: { kind: 'enum', values: ['turn', 'notify'], default: 'turn', description: 'turn: the agent gets message and answers (a model call); notify: text is sent as it is, no model call' },
            session: { kind: 'string', description: 'the session that gets the message; a CHANNEL:CHAT session (telegram:12345) is answered in that chat. Unset: owner.notify (required without it)' },
            message: { kind: 'string', description: 'the system message the agent receives (required with action turn); the value is appended' },
            text: { kind: 'string', description: "what action notify sends to the session's chat (a CHANNEL:CHAT session) or else owner.notify; {value}, {direction} (above/below), {threshold}, {time} are filled in (required with action notify)" },
          },
        },
        default: [],
        description: 'I2C readings that start an agent turn, or send a fixed text, when they cross a threshold (above and/or below)',
      },
      cameras: {
        kind: 'array',
        items: {
          kind: 'object',
          description: 'one named camera that camera_snapshot takes stills from',
          fields: {
            name: { kind: 'string', description: 'the name camera_snapshot uses, e.g. shelf (required, unique)' },
            device: { kind: 'string', description: 'rpicam (the Pi camera through rpicam-still or libcamera-still) or a V4L2 device path such as /dev/video0 (required)' },
            width: { kind: 'integer', min: 16, max: 4656, default: 1280, description: 'width of a snapshot in pixels, unless the call asks for another' },
            height: { kind: 'integer', min: 16, max: 3496, default: 720, description: 'height of a snapshot in pixels, unless the call asks for another' },
          },
        },
        default: [],
        description: 'named cameras for camera_snapshot ([{"name":"shelf","device":"rpicam"},{"name":"door","device":"/dev/video0"}]); a snapshot is a privacy action, asked for outside tools.controlChats',
      },
      sensors: {
        kind: 'array',
        items: {
          kind: 'object',
          description: 'one named sensor: an I2C register or an ADC pin of a board on a serial port',
          fields: {
            name: { kind: 'string', description: 'the name sensor_read and Home Assistant use, e.g. shed_temperature (required, unique)' },
            bus: { kind: 'integer', min: 0, description: 'I2C bus number, /dev/i2c-N (an I2C sensor; with address and register)' },
            address: { kind: 'integer', min: 3, max: 119, description: '7-bit device address, 0x03-0x77 (an I2C sensor)' },
            register: { kind: 'integer', min: 0, max: 255, description: 'the register read (an I2C sensor)' },
            length: { kind: 'integer', min: 1, max: 4, default: 1, description: 'bytes read from the register, as one big-endian number (an I2C sensor)' },
            signed: { kind: 'boolean', default: false, description: "the register's number is two's complement (a temperature below zero)" },
            line: { kind: 'string', description: 'an ADC pin of a hardware.devices board, device:pin, e.g. bench:A0 (instead of bus, address and register)' },
            scale: { kind: 'number', default: 1, description: 'value = raw reading × scale + offset' },
            offset: { kind: 'number', default: 0, description: 'added after scale' },
            unit: { kind: 'string', description: 'the unit of the value, e.g. °C, %, V (Home Assistant shows it)' },
            deviceClass: { kind: 'string', description: "Home Assistant's sensor device class, e.g. temperature, humidity, voltage, illuminance" },
            intervalMs: { kind: 'integer', min: 1000, description: 'how often Home Assistant gets the value; unset: mqtt.homeAssistant.stateIntervalSeconds' },
          },
        },
        default: [],
        description: 'named sensors read by sensor_read and shown in Home Assistant ({"name":"shed_temperature","bus":1,"address":72,"register":0,"length":2,"signed":true,"scale":0.00390625,"unit":"°C","deviceClass":"temperature"})',
      },
      devices: {
        kind: 'array',
        items: {
          kind: 'object',
          description: 'one board or device on a serial port',
          fields: {
            name: { kind: 'string', description: 'the name tools use, e.g. bench (required, unique)' },
            kind: { kind: 'enum', values: ['mcu', 'raw'], default: 'mcu', description: "mcu: speaks pinclaw's MCU protocol (docs/protocol.md); raw: its own language, through serial_write/serial_read" },
            port: { kind: 'string', description: 'a device path (/dev/ttyACM0, /dev/serial/by-id/...) or socket://host:port (required)' },
            baud: { kind: 'integer', min: 50, max: 4000000, default: 115200, description: 'the line speed' },
            board: { kind: 'string', description: "a board profile id (arduino-uno); default: the one the firmware's hello names" },
            timeoutMs: { kind: 'integer', min: 10, max: 60000, default: 250, description: 'how long one protocol request waits for its reply before it is sent again (twice)' },
          },
        },
        default: [],
        description: 'boards and devices on serial ports ({"name":"bench","kind":"mcu","port":"/dev/ttyACM0","baud":115200})',
      },
      maixcam: {
        kind: 'object',
        description: 'the MaixCam channel: cameras connect over TCP, send detections as JSON lines and take commands (docs/hardware.md)',
        fields: {
          port: { kind: 'integer', min: 0, max: 65535, description: 'TCP port the gateway listens on for cameras; unset: no MaixCam server' },
          host: { kind: 'string', default: '0.0.0.0', description: 'address to listen on (the cameras are on the LAN)' },
          token: { kind: 'string', secret: true, description: 'the shared token each camera sends in its hello (required with port)' },
          triggers: {
            kind: 'array',
            items: {
              kind: 'object',
              description: 'detections that start an agent turn',
              fields: {
                label: { kind: 'string', description: 'the detected class, e.g. person; unset: any' },
                camera: { kind: 'string', description: "the camera's name from its hello; unset: any" },
                minConfidence: { kind: 'number', min: 0, max: 1, default: 0.5, description: 'detections below this confidence are ignored' },
                debounceMs: { kind: 'integer', min: 0, max: 3600000, default: 10000, description: 'detections closer than this to the previous one are one sighting' },
                session: { kind: 'string', description: 'the session that gets the message (required)' },
                message: { kind: 'string', description: 'the system message the agent receives (required)' },
                rateLimit: triggerRateLimit,
              },
            },
            default: [],
            description: 'camera detections that start an agent turn ({"label":"person","minConfidence":0.7,"session":"home","message":"someone is at the door"})',
          },
        },
      },
    },
  },
  mqtt: {
    kind: 'object',
    description: 'MQTT: availability, a chat channel, Home Assistant discovery, triggers and a fleet of boards (docs/mqtt.md); runs in the gateway when url is set',
    fields: {
      url: { kind: 'string', description: 'the broker: mqtt://host:1883, mqtts://host:8883, ws://host:9001/mqtt or wss://...; unset: no MQTT' },
      nodeId: { kind: 'string', description: "this board's name in topics and in Home Assistant (letters, digits, _ and -); unset: the host name" },
      username: { kind: 'string', description: 'the broker user, if it wants one' },
      password: { kind: 'string', secret: true, description: "the broker user's password" },
      baseTopic: { kind: 'string', default: 'pinclaw', description: 'the first level of every pinclaw topic: <baseTopic>/<nodeId>/status, .../chat/in, ...' },
      protocol: { kind: 'enum', values: ['5', '3.1.1'], default: '5', description: 'the MQTT protocol version spoken to the broker' },
      ca: { kind: 'string', description: "a PEM file of the CA that signed the broker's certificate (mqtts://, wss://); unset: the system's CAs" },
      keepaliveSeconds: { kind: 'integer', min: 5, max: 3600, default: 30, description: 'MQTT keepalive: a broker silent this long (1.5 times) counts as lost, and a board silent this long is shown offline' },
      reconnect: {
        kind: 'object',
        description: 'reconnecting after the broker was lost or refused',
        fields: {
          minMs: { kind: 'integer', min: 100, default: 1000, description: 'the first wait' },
          maxMs: { kind: 'integer', min: 100, default: 60000, description: 'the longest wait; each failed attempt doubles it up to this' },
        },
      },
      chat: {
        kind: 'object',
        description: 'the MQTT chat channel: <baseTopic>/<nodeId>/chat/in and .../chat/out',
        fields: {
          enabled: { kind: 'boolean', default: false, description: 'subscribe chat/in and answer on chat/out; off until the owner turns it on, since anyone who may publish on the broker could talk to the agent' },
          session: { kind: 'string', default: 'mqtt', description: 'the session of a message that names none' },
          allowFrom: {
            kind: 'array',
            items: {
              kind: 'object',
              description: 'one sender: its messages carry "from" and "token"',
              fields: {
                name: { kind: 'string', description: 'the sender\'s name, sent as "from" (required; letters, digits, _ . @ -)' },
                token: { kind: 'string', secret: true, description: 'the sender\'s token, sent as "token" (required, at least 16 characters; the broker does not tell who published, so this is the proof)' },
                sessions: { kind: 'array', items: { kind: 'string', description: 'a session name' }, description: 'the sessions this sender may talk in; a session listed here belongs to the senders that list it, and a session with rights of its own (mqtt:NAME in tools.controlChats or a tools.overrides chat) needs it (docs/mqtt.md)' },
              },
            },
            default: [],
            description: 'who may talk on chat/in ({"name":"panel","token":"...","sessions":["kitchen"]}); anyone else gets a pairing code the owner approves with pinclaw pairing approve CODE',
          },
          debounceMs: { kind: 'integer', min: 0, default: 0, description: 'messages of one session within this window are merged into one turn' },
        },
      },
      homeAssistant: {
        kind: 'object',
        description: 'Home Assistant MQTT discovery of the node and its named lines, devices and sensors',
        fields: {
          enabled: { kind: 'boolean', default: true, description: 'publish discovery configs and states' },
          discoveryPrefix: { kind: 'string', default: 'homeassistant', description: "Home Assistant's discovery prefix" },
          stateIntervalSeconds: { kind: 'integer', min: 5, default: 60, description: 'how often uptime, inputs and sensors are published (an input also on each change)' },
        },
      },
      triggers: {
        kind: 'array',
        items: {
          kind: 'object',
          description: 'one MQTT trigger',
          fields: {
            topic: { kind: 'string', description: 'the topic or filter (+ and # wildcards) to watch (required)' },
            when: {
              kind: 'object',
              description: 'the condition, judged without the model; every condition given must hold; none: every message',
              fields: {
                path: { kind: 'string', description: 'the JSON field judged, dotted (state.temperature); unset: the whole payload, as JSON or as text' },
                equals: { kind: 'string', description: 'the value (as text: "on", "23", "true") equals this' },
                notEquals: { kind: 'string', description: 'the value (as text) differs from this' },
                above: { kind: 'number', description: 'the value is a number above this' },
                below: { kind: 'number', description: 'the value is a number below this' },
                contains: { kind: 'string', description: 'the value, as text, contains this (case-insensitive)' },
              },
            },
            debounceMs: { kind: 'integer', min: 0, max: 3600000, default: 1000, description: 'matches closer than this to the previous match are one event' },
            session: { kind: 'string', description: 'the session that gets the message (required)' },
            message: { kind: 'string', description: 'the system message the agent receives (required); the topic and payload are appended' },
            rateLimit: triggerRateLimit,
          },
        },
        default: [],
        description: 'MQTT messages that start an agent turn ({"topic":"zigbee2mqtt/door","when":{"path":"contact","equals":"false"},"session":"home","message":"the door opened"})',
      },
      fleet: {
        kind: 'object',
        description: 'boards of one fleet calling each other\'s tools (remote_tool) over MQTT',
        fields: {
          expose: { kind: 'array', items: { kind: 'string', description: 'tool name' }, default: [], description: "tools other nodes may call here; each call also passes this node's tool policy as channel fleet, chat <caller node>" },
          key: { kind: 'string', secret: true, description: "this node's fleet key: it signs this node's calls, and (without callers) the calls it accepts; every node of a shared-key fleet has the same" },
          callers: {
            kind: 'array',
            items: {
              kind: 'object',
              description: 'one node allowed to call here',
              fields: {
                node: { kind: 'string', description: 'the calling node (required)' },
                key: { kind: 'string', secret: true, description: "that node's fleet key (required)" },
              },
            },
            default: [],
            description: 'per-node keys: only these nodes may call, each signing with its own key; empty: any node with this node\'s key',
          },
          timeoutMs: { kind: 'integer', min: 100, max: 600000, default: 10000, description: 'how long a remote_tool call waits for the answer' },
        },
      },
    },
  },
  mcp: {
    kind: 'object',
    description: 'the Model Context Protocol: outside servers whose tools the agent may use, and pinclaw mcp serve (docs/mcp.md, docs/mcp-serve.md)',
    fields: {
      servers: {
        kind: 'record',
        default: {},
        description: 'MCP servers by name (letters, digits, _ and -, starting with a letter): {"command":"npx","args":["-y","some-server"]} (stdio) or {"url":"https://host/mcp"} (Streamable HTTP)',
        values: {
          kind: 'object',
          description: 'one MCP server',
          fields: {
            enabled: { kind: 'boolean', default: true, description: 'false keeps the server configured but not started' },
            command: { kind: 'string', description: 'stdio: the program to start (a path, or a name looked up in PATH)' },
            args: { kind: 'array', items: { kind: 'string', description: 'argument' }, default: [], description: 'stdio: its arguments' },
            env: { kind: 'record', values: { kind: 'string', secret: true, description: 'value (stored encrypted)' }, default: {}, description: 'stdio: environment variables the server gets (it gets no other of pinclaw\'s); values are secrets, stored encrypted' },
            cwd: { kind: 'string', description: 'stdio: its working directory (default: the workspace)' },
            url: { kind: 'string', description: 'Streamable HTTP: the endpoint, e.g. https://host/mcp' },
            headers: { kind: 'record', values: { kind: 'string', secret: true, description: 'value (stored encrypted)' }, default: {}, description: 'Streamable HTTP: request headers (Authorization...); values are secrets, stored encrypted' },
            tools: { kind: 'array', items: { kind: 'string', description: "a tool name as the server calls it, or * for all" }, default: ['*'], description: 'the server\'s tools offered to the agent' },
            callTimeoutMs: { kind: 'integer', min: 100, max: 600000, default: 60000, description: 'longest a tool call may wait for its answer or progress (docs/mcp.md)' },
            listTimeoutMs: { kind: 'integer', min: 100, max: 600000, default: 10000, description: 'longest the start (initialize) and the tool listing may take' },
            maxResultBytes: { kind: 'integer', min: 1024, max: 10485760, default: 65536, description: 'most bytes of one result the model gets; the rest is cut and said' },
            sandbox: { kind: 'boolean', default: true, description: 'stdio: run the server in the OS sandbox (bubblewrap, or Landlock where bubblewrap does not work or sandbox.backend says landlock); false runs it unconfined' },
            network: { kind: 'boolean', default: false, description: 'stdio: let the sandboxed server open network connections' },
            paths: { kind: 'array', items: { kind: 'string', description: 'absolute path' }, default: [], description: 'stdio: directories the sandboxed server may read (besides the system, the workspace and its own command\'s directory)' },
            writePaths: { kind: 'array', items: { kind: 'string', description: 'absolute path' }, default: [], description: 'stdio: directories the sandboxed server may write (besides its private temporary directory)' },
          },
        },
      },
      serve: {
        kind: 'object',
        description: '`pinclaw mcp serve`: this board\'s tools for an MCP client over stdio (ssh pi@host pinclaw mcp serve)',
        fields: {
          tools: { kind: 'array', items: { kind: 'string', description: 'tool name, or * for every tool' }, description: 'the tools an MCP client sees and may call; each call also passes the tool policy as channel mcp, chat stdio (a physical action needs "mcp:stdio" in tools.controlChats); unset: the read-only tools' },
        },
      },
    },
  },
  memory: {
    kind: 'object',
    description: 'long-term memory (docs/memory.md)',
    fields: {
      embedder: { kind: 'enum', values: ['local', 'openai', 'none'], default: 'local', description: 'how texts become vectors: local (built in, offline), openai (an OpenAI-compatible /v1/embeddings server: Ollama, llama.cpp, OpenAI), none (keyword search only)' },
      openai: {
        kind: 'object',
        description: 'the embedding server, for embedder openai',
        fields: {
          baseUrl: { kind: 'string', default: 'http://127.0.0.1:11434/v1', description: 'its base URL (POST {baseUrl}/embeddings)' },
          model: { kind: 'string', default: 'nomic-embed-text', description: 'the embedding model' },
          apiKey: { kind: 'string', secret: true, description: 'bearer key, if the server needs one' },
          dimensions: { kind: 'integer', min: 1, description: 'vector length to ask for; unset: what the model gives' },
          batchSize: { kind: 'integer', min: 1, max: 2048, default: 64, description: 'texts per request' },
        },
      },
      chunkTokens: { kind: 'integer', min: 50, max: 4000, default: 400, description: 'tokens per chunk of a memory file' },
      overlapTokens: { kind: 'integer', min: 0, max: 1000, default: 80, description: 'tokens repeated between neighbouring chunks' },
      promptTokens: { kind: 'integer', min: 0, max: 8000, default: 600, description: 'budget of the memories added to each turn for its message (0: none)' },
      maxChunks: { kind: 'integer', min: 100, default: 100000, description: 'size cap: beyond it the oldest daily notes and entries are archived (kept in memory_archive, never deleted)' },
      decayHalfLifeDays: { kind: 'integer', min: 1, default: 60, description: 'a daily note counts half as much in ranking after this many days (MEMORY.md and entries never decay)' },
      transcripts: { kind: 'boolean', default: false, description: 'also index session transcripts' },
    },
  },
  hooks: {
    kind: 'object',
    description: 'command hooks: owner-written commands that see, veto or rewrite what the agent does (docs/hooks.md)',
    fields: {
      PreToolUse: hookList('before a tool call runs (after policy, before confirmation): may block it, ask the owner, or rewrite its input'),
      PostToolUse: hookList('after a tool call ran: may add context to its result, or withhold the result (block)'),
      MessageReceived: hookList("before a turn answers a message: block drops the message with a notice"),
      MessageSending: hookList('before a reply is saved and delivered: block withholds it (a notice instead), updatedInput.text rewrites it'),
      TurnEnd: hookList('after a turn ended (observes only)'),
      SessionStart: hookList("before the first turn of a session: additionalContext goes into that turn's system prompt"),
      HardwareTrigger: hookList('before a hardware trigger queues a turn: block means no turn'),
    },
  },
  voice: {
    kind: 'object',
    description: 'voice notes (docs/configuration.md#voice): speech to text in, text to speech out (/voice on); audio through ffmpeg',
    fields: {
      stt: {
        kind: 'object',
        description: 'speech to text: a voice note becomes the owner\'s text',
        fields: {
          backend: { kind: 'enum', values: ['openai', 'command'], description: 'openai: an OpenAI-compatible {baseUrl}/audio/transcriptions (whisper.cpp server, OpenAI, Groq); command: the program in command; unset: voice notes are saved, not transcribed' },
          baseUrl: { kind: 'string', default: 'https://api.openai.com/v1', description: 'openai: the server\'s base URL (a whisper.cpp server on the LAN: http://HOST:8080/v1)' },
          model: { kind: 'string', default: 'whisper-1', description: 'openai: the model (whisper-large-v3 on Groq; a whisper.cpp server ignores it)' },
          apiKey: { kind: 'string', secret: true, description: 'openai: bearer key, if the server needs one' },
          language: { kind: 'string', description: 'openai: the spoken language as an ISO-639-1 code (en, de); unset: the server guesses' },
          command: { kind: 'array', items: { kind: 'string', description: 'program, then its arguments' }, default: [], description: 'command: the argv of the program, {wav} replaced by the path of a 16 kHz mono 16-bit WAV; it prints the text' },
          timeoutSeconds: { kind: 'integer', min: 1, max: 3600, default: 120, description: 'longest one transcription may take' },
        },
      },
      tts: {
        kind: 'object',
        description: 'text to speech: the reply also as a voice note, in chats where the owner said /voice on',
        fields: {
          backend: { kind: 'enum', values: ['openai', 'command'], description: 'openai: an OpenAI-compatible {baseUrl}/audio/speech; command: the program in command (espeak-ng, Piper); unset: /voice on is refused' },
          baseUrl: { kind: 'string', default: 'https://api.openai.com/v1', description: 'openai: the server\'s base URL' },
          model: { kind: 'string', default: 'tts-1', description: 'openai: the model' },
          voice: { kind: 'string', default: 'alloy', description: 'openai: the voice' },
          apiKey: { kind: 'string', secret: true, description: 'openai: bearer key, if the server needs one' },
          command: { kind: 'array', items: { kind: 'string', description: 'program, then its arguments' }, default: [], description: 'command: the argv of the program, {wav} replaced by the WAV it writes, {text} by the text (also on its stdin), e.g. ["espeak-ng","-w","{wav}"]' },
          timeoutSeconds: { kind: 'integer', min: 1, max: 3600, default: 60, description: 'longest one synthesis may take' },
          maxChars: { kind: 'integer', min: 1, max: 100000, default: 1500, description: 'longer replies go as text only (the owner is told why)' },
        },
      },
      maxSeconds: { kind: 'integer', min: 1, max: 3600, default: 300, description: 'longest voice note transcribed; a longer one is saved in the workspace and the owner is told' },
      ffmpeg: { kind: 'string', default: 'ffmpeg', description: 'the ffmpeg program (Debian: apt install ffmpeg)' },
    },
  },
  service: {
    kind: 'object',
    description: 'the systemd unit pinclaw service install writes (docs/operations.md#under-systemd)',
    fields: {
      memoryMaxMb: { kind: 'integer', min: 64, description: "the unit's MemoryMax= in MiB, the V8 heap cap follows it; unset: the board profile's memory budget, else a quarter of the RAM (128 to 1024)" },
      watchdogSec: { kind: 'integer', min: 0, max: 3600, default: 60, description: "the unit's WatchdogSec=: a gateway unhealthy (event loop stalled, database not writable) this long is restarted; 0: no watchdog" },
      user: { kind: 'string', default: 'pinclaw', description: 'the system account a --system service runs as; install creates it (useradd --system)' },
    },
  },
  update: {
    kind: 'object',
    description: 'pinclaw update: signed releases, checked and installed with rollback (docs/operations.md#updates)',
    fields: {
      url: { kind: 'string', description: 'the release location (http:// or https://) holding pinclaw-linux-<arch>, SHA256SUMS and SHA256SUMS.minisig; unset: pinclaw update and the daily check say to set it (the project publishes no release location yet)' },
      publicKeys: { kind: 'array', items: { kind: 'string', description: 'a minisign public key: the RW... line of minisign.pub' }, default: [], description: 'minisign public keys trusted besides the ones built into pinclaw (src/update/release-keys.ts), e.g. the key of your own build' },
      healthSeconds: { kind: 'integer', min: 5, max: 3600, default: 120, description: 'under systemd: how long the new version has to send READY=1 and a first watchdog ping before the old one is put back' },
      check: { kind: 'enum', values: ['off', 'daily'], default: 'off', description: 'daily: the gateway looks for a newer signed release once a day and tells owner.notify (it never installs by itself)' },
    },
  },
} as const satisfies Record<string, Field>;

export const schema: ObjectField = { kind: 'object', description: 'pinclaw configuration', fields: sections };

// Type inference from the tree. Objects are always materialised by validation (missing sections
// become {} and get their defaults), so only leaves without a default are optional.
type Simplify<T> = { [K in keyof T]: T[K] } & {};
type Present<F> = F extends { kind: 'object' } ? true : F extends { default: unknown } ? true : false;
type InferFields<Fs> = Simplify<
  { -readonly [K in keyof Fs as Present<Fs[K]> extends true ? K : never]: Infer<Fs[K]> } & {
    -readonly [K in keyof Fs as Present<Fs[K]> extends true ? never : K]?: Infer<Fs[K]>;
  }
>;
type Infer<F> = F extends { kind: 'string' } ? string
  : F extends { kind: 'integer' | 'number' } ? number
  : F extends { kind: 'boolean' } ? boolean
  : F extends { kind: 'enum'; values: readonly (infer V)[] } ? V
  : F extends { kind: 'object'; fields: infer Fs } ? InferFields<Fs>
  : F extends { kind: 'array'; items: infer I } ? Infer<I>[]
  : F extends { kind: 'record'; values: infer V } ? Record<string, Infer<V>>
  : never;

export type PinclawConfig = InferFields<typeof sections>;

/** The field at a dot path ("gateway.port"), or undefined when the schema has no such key. */
export function fieldAt(path: string): Field | undefined {
  let field: Field = schema;
  for (const seg of path.split('.')) {
    // A record's keys are the owner's: any well-formed one leads to its value field.
    if (field.kind === 'record' && RECORD_KEY.test(seg)) field = field.values;
    else if (field.kind !== 'object' || !Object.hasOwn(field.fields, seg)) return undefined;
    else field = field.fields[seg]!;
  }
  return field;
}

export interface Leaf {
  path: string;
  field: Exclude<Field, ObjectField>;
}

/** Every non-object field with its dot path, in schema order. */
export function leaves(field: Field = schema, prefix = ''): Leaf[] {
  if (field.kind !== 'object') return [{ path: prefix, field }];
  return Object.entries(field.fields).flatMap(([k, f]) => leaves(f, prefix ? `${prefix}.${k}` : k));
}

export interface SecretSlot {
  /** dot path with list indexes: "mqtt.password", "mqtt.fleet.callers[0].key" */
  path: string;
  parent: Record<string, unknown>;
  key: string;
}

/**
 * Every secret field present in a config, inside lists of objects too (mqtt.fleet.callers[].key),
 * with the object that holds it: decryption and redaction both walk this.
 */
export function secretSlots(config: unknown, field: Field = schema, prefix = ''): SecretSlot[] {
  if (typeof config !== 'object' || config === null) return [];
  if (field.kind === 'array') {
    if (!Array.isArray(config)) return [];
    return config.flatMap((item, i) => secretSlots(item, field.items, `${prefix}[${i}]`));
  }
  if (field.kind === 'record') {
    const map = config as Record<string, unknown>;
    return Object.keys(map).flatMap((k) => {
      const path = prefix ? `${prefix}.${k}` : k;
      if (field.values.secret && field.values.kind === 'string') return [{ path, parent: map, key: k }];
      return secretSlots(map[k], field.values, path);
    });
  }
  if (field.kind !== 'object') return [];
  const obj = config as Record<string, unknown>;
  return Object.entries(field.fields).flatMap(([k, f]) => {
    const path = prefix ? `${prefix}.${k}` : k;
    if (f.secret && f.kind === 'string') return Object.hasOwn(obj, k) ? [{ path, parent: obj, key: k }] : [];
    return secretSlots(obj[k], f, path);
  });
}

function defaultOf(field: Field): unknown {
  if (field.default !== undefined) return structuredClone(field.default);
  if (field.kind !== 'object') return undefined;
  const out: Record<string, unknown> = {};
  for (const [k, f] of Object.entries(field.fields)) {
    const v = defaultOf(f);
    if (v !== undefined) out[k] = v;
  }
  return out;
}

/** A fresh configuration holding only defaults. */
export function defaults(): PinclawConfig {
  return defaultOf(schema) as PinclawConfig;
}
