// The schema, one migration per change, never edited once released. Later capabilities append here.
import type { Migration } from './migrations.js';

export const migrations: readonly Migration[] = [
  {
    version: 1,
    name: 'state',
    up: `create table state (
      key text primary key,
      value text not null,
      updated_at text not null
    )`,
  },
  {
    version: 2,
    name: 'queue and sessions',
    up: `
    -- Every inbound message is a row before anything else happens. Rows of one sender that arrive
    -- within the channel's debounce window share available_at and are handled as one prompt.
    create table inbound (
      id integer primary key,
      session_key text not null,
      channel text not null,
      chat_id text not null,
      sender text not null,
      text text not null,
      meta text,
      state text not null default 'pending' check (state in ('pending', 'processing', 'done', 'failed')),
      attempts integer not null default 0,
      last_error text,
      owner text,
      -- the last row of the burst this row was answered with (its reply's inbound_id)
      burst_id integer,
      available_at integer not null,
      created_at integer not null,
      updated_at integer not null
    );
    create index inbound_pending on inbound (state, available_at);
    create index inbound_session on inbound (session_key, id);
    create index inbound_burst on inbound (burst_id);

    -- Replies, recorded in the same transaction that finishes the turn; idempotency_key makes a
    -- retried turn unable to record a second reply to the same message.
    create table outbound (
      id integer primary key,
      idempotency_key text not null unique,
      inbound_id integer references inbound (id),
      session_key text not null,
      channel text not null,
      chat_id text not null,
      text text not null,
      kind text not null default 'reply' check (kind in ('reply', 'notice')),
      state text not null default 'pending' check (state in ('pending', 'sent')),
      created_at integer not null,
      sent_at integer
    );
    create index outbound_pending on outbound (state, channel);
    create index outbound_inbound on outbound (inbound_id);

    create table sessions (
      key text primary key,
      messages text not null,
      meta text not null default '{}',
      created_at integer not null,
      updated_at integer not null
    );

    -- A session row that cannot be read is moved here, kept, and the session starts fresh.
    create table sessions_quarantine (
      id integer primary key,
      key text not null,
      messages text not null,
      meta text,
      error text not null,
      moved_at integer not null
    );`,
  },
  {
    version: 3,
    name: 'audit',
    up: `
    -- One row per tool call, allowed or not. An allowed call is written as 'allowed' before the tool
    -- runs and becomes 'ok' or 'error' when it ends, so a crash mid-call leaves evidence it started.
    create table audit (
      id integer primary key,
      at integer not null,
      session_key text not null,
      channel text not null,
      chat_id text not null,
      caller text,
      tool text not null,
      -- the arguments as JSON, secrets redacted, capped
      input text not null,
      outcome text not null check (outcome in ('allowed', 'denied', 'error', 'ok')),
      -- the rule that decided: what refused a denied call, what allowed the others
      rule text,
      -- the refusal or the error, in words
      detail text,
      duration_ms integer,
      output_bytes integer
    );
    create index audit_at on audit (at);
    create index audit_tool on audit (tool, at);`,
  },
  {
    version: 4,
    name: 'audit-physical',
    up: `
    -- A physical action (a GPIO line driven, an I2C register written): the device and its value
    -- before and after, as JSON, so the audit shows what changed in the world and not only the call.
    alter table audit add column physical text;`,
  },
  {
    version: 5,
    name: 'channels',
    up: `
    -- Delivery of one reply is retried per row with backoff (next_attempt_at), so a channel that is
    -- down waits on its own rows only. A reply sent in several parts records each part's message id
    -- as it is sent (JSON array): a retry after a failure or a crash sends only the parts not yet sent.
    alter table outbound add column attempts integer not null default 0;
    alter table outbound add column next_attempt_at integer not null default 0;
    alter table outbound add column last_error text;
    alter table outbound add column delivered_parts text;

    -- Senders the owner has let in (a Telegram user, a dashboard browser), and those who asked.
    -- A pending request carries the code the owner approves with: pinclaw pairing approve CODE.
    create table pairing (
      id integer primary key,
      channel text not null,
      subject text not null,
      label text,
      code text not null unique,
      state text not null check (state in ('pending', 'approved')),
      created_at integer not null,
      -- when the stranger was last told how to pair (at most once an hour)
      prompted_at integer,
      approved_at integer,
      unique (channel, subject)
    );

    -- Dashboard logins: the cookie is a random secret; only its SHA-256 is stored.
    create table web_sessions (
      id_hash text primary key,
      label text,
      created_at integer not null,
      last_seen_at integer not null,
      expires_at integer not null
    );`,
  },
  {
    version: 6,
    name: 'memory',
    up: `
    -- Long-term memory: chunks of the workspace's memory files and entries stored by tools or the
    -- CLI. A vector is kept with the id of the embedder that made it, so vectors of two embedders are
    -- never compared and a change of embedder is seen (docs/memory.md).
    -- autoincrement: an id once cited ("memory #12") never comes back for another memory.
    create table memory_chunks (
      id integer primary key autoincrement,
      text text not null,
      kind text not null,
      -- a chunk of a workspace file: its path (relative to the workspace) and 1-based line range
      file text,
      line_start integer,
      line_end integer,
      -- the session an entry was stored from
      session text,
      hash text not null,
      embedder text,
      dims integer,
      embedding blob,
      created_at integer not null,
      updated_at integer not null
    );
    create index memory_chunks_file on memory_chunks (file);
    create index memory_chunks_hash on memory_chunks (hash);
    create index memory_chunks_embedder on memory_chunks (embedder);

    -- The words of every chunk for SQLite's own full-text search (export checks, the CLI without the
    -- addon); the ranking index in the addon is built from the same rows.
    -- The generation counts every change of memory_chunks, whichever process made it: a saved
    -- snapshot of the ranking index is loaded only when it was taken at the current generation.
    create table memory_meta (key text primary key, value integer not null);
    insert into memory_meta (key, value) values ('generation', 0);

    create virtual table memory_fts using fts5(text, content = 'memory_chunks', content_rowid = 'id');
    create trigger memory_chunks_ai after insert on memory_chunks begin
      insert into memory_fts (rowid, text) values (new.id, new.text);
      update memory_meta set value = value + 1 where key = 'generation';
    end;
    create trigger memory_chunks_ad after delete on memory_chunks begin
      insert into memory_fts (memory_fts, rowid, text) values ('delete', old.id, old.text);
      update memory_meta set value = value + 1 where key = 'generation';
    end;
    create trigger memory_chunks_au after update on memory_chunks begin
      insert into memory_fts (memory_fts, rowid, text) values ('delete', old.id, old.text);
      insert into memory_fts (rowid, text) values (new.id, new.text);
      update memory_meta set value = value + 1 where key = 'generation';
    end;

    -- What the size cap or a merge took out of the memory, kept (never deleted), with the reason.
    create table memory_archive (
      id integer primary key,
      chunk_id integer not null,
      text text not null,
      kind text not null,
      file text,
      line_start integer,
      line_end integer,
      session text,
      created_at integer not null,
      archived_at integer not null,
      reason text not null
    );

    -- Vectors by content hash, per embedder: the same text is never sent to a server twice.
    create table embedding_cache (
      embedder text not null,
      hash text not null,
      vector blob not null,
      dims integer not null,
      created_at integer not null,
      primary key (embedder, hash)
    );`,
  },
  {
    version: 7,
    name: 'scheduler',
    up: `
    -- Scheduled jobs (pinclaw cron, the cron_* tools). next_run_at is stored, so finding what is due
    -- is one indexed query; it is null while a job is paused and once a one-shot has run.
    -- autoincrement: a removed job's id never comes back for another job.
    create table cron_jobs (
      id integer primary key autoincrement,
      kind text not null check (kind in ('cron', 'every', 'at')),
      -- the cron expression, or the --every / --at text as given
      expr text not null,
      tz text,
      every_ms integer,
      at_ms integer,
      anchor_at integer not null,
      message text not null,
      session_key text not null,
      -- where the reply goes: 'cron' (logged) or the --deliver channel and chat
      channel text not null,
      chat_id text not null,
      state text not null default 'active' check (state in ('active', 'paused', 'done')),
      next_run_at integer,
      created_by text not null,
      created_at integer not null,
      updated_at integer not null
    );
    create index cron_jobs_due on cron_jobs (state, next_run_at);

    -- The run log. One row per job and scheduled time, written in the transaction that commits the
    -- inbound message and moves the job on: a time already recorded is never fired again.
    create table cron_runs (
      id integer primary key,
      job_id integer not null,
      scheduled_at integer not null,
      fired_at integer not null,
      kind text not null check (kind in ('scheduled', 'missed', 'late', 'manual', 'skipped')),
      missed integer not null default 0,
      inbound_id integer references inbound (id),
      error text,
      unique (job_id, scheduled_at)
    );`,
  },
  {
    version: 8,
    name: 'fleet seen calls',
    up: `
    -- The ids of signed fleet calls this node received within the signature window (src/fleet/remote.ts):
    -- a captured call replayed after a restart is refused like one replayed while running. at is the
    -- call's own time (the caller's clock); rows older than the window are deleted as calls arrive.
    create table fleet_seen (
      caller text not null,
      call_id text not null,
      at integer not null,
      primary key (caller, call_id)
    ) without rowid;
    create index fleet_seen_at on fleet_seen (at);`,
  },
  {
    version: 9,
    name: 'readings ring',
    up: `
    -- The last readings of each sensor and GPIO line (src/store/readings.ts), for the dashboard's
    -- 24-hour plots; kind is 'sensor' or 'line', name its hardware.sensors or hardware.lines name.
    -- Each write deletes what is past the per-source cap, so the table never grows beyond
    -- sources x cap rows.
    create table readings (
      kind text not null check (kind in ('sensor', 'line')),
      name text not null,
      at integer not null,
      value real not null
    );
    create index readings_source_at on readings (kind, name, at);`,
  },
  {
    version: 10,
    name: 'signal envelopes seen',
    up: `
    -- The Signal envelopes already queued, by sender and timestamp (src/channels/signal/seen.ts):
    -- the daemon's event stream has no position to resume from for sure, so an envelope handed over
    -- again is recognized here and dropped. Pruned after a week. Empty without Signal.
    create table signal_seen (key text primary key, at integer not null);
    create index signal_seen_at on signal_seen (at);`,
  },
  {
    version: 11,
    name: 'discord messages seen',
    up: `
    -- The Discord message ids already queued (src/channels/discord/seen.ts): a resumed gateway
    -- session replays events after the saved sequence number, so a message handed over again is
    -- recognized here and dropped. Pruned after a week. Empty without Discord.
    create table discord_seen (id text primary key, at integer not null);
    create index discord_seen_at on discord_seen (at);`,
  },
  {
    version: 12,
    name: 'matrix rooms told',
    // Not in the SQL (the bundle keeps its text): the Matrix rooms already told they are end-to-end
    // encrypted (src/channels/matrix/rooms.ts), so the notice goes once per room across restarts.
    // The sync position is the state key matrix.since. Empty without Matrix.
    up: `create table matrix_rooms (room_id text primary key, encrypted_notice_at integer);`,
  },
  {
    version: 13,
    name: 'fleet seen calls by time',
    // Not in the SQL (the bundle keeps its text): fleet_seen keyed by the call's time first. Keyed by
    // random call ids, each insert landed on another page of the table, so a batch of a fleet's reads
    // (src/store/write-soon.ts) wrote about a page per call to the WAL, and the checkpoints copied them
    // back; inserts in time order touch the last pages. The time is signed with the id, so (at, caller,
    // call_id) tells a replay as (caller, call_id) did, and src/fleet/remote.ts refuses a reused id
    // by id; the index on at is the key's prefix now.
    up: `
    create table fleet_seen_by_time (caller text not null, call_id text not null, at integer not null, primary key (at, caller, call_id)) without rowid;
    insert into fleet_seen_by_time (caller, call_id, at) select caller, call_id, at from fleet_seen;
    drop table fleet_seen;
    alter table fleet_seen_by_time rename to fleet_seen;`,
  },
];
