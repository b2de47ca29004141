// Bundles src/ into one CommonJS file (dist/pinclaw.cjs): what `npm start` runs and what the single
// executable embeds. Native addons are never bundled: every package's own loader (`bindings`,
// `node-gyp-build`) is replaced by pinclaw's loader, which finds the .node file in a dev tree or
// extracts it from the executable's assets.
import { build } from 'esbuild';
import { cpSync, mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { V8_FLAGS } from './v8-flags.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const loaderPath = join(root, 'src', 'native', 'loader.ts');
/** loadBuiltin: a built-in's first load under V8's defaults in the executable (see builtinLoad). */
const v8FlagsPath = join(root, 'src', 'v8-flags.ts');
const lazyLoaderPath = join(root, 'src', 'lazy-chunk.ts');
/** The dashboard's static files (src/channels/http/dashboard.ts serves them), copied as they are. */
export const dashboardDir = join(root, 'src', 'channels', 'http', 'dashboard');

const srcDir = join(root, 'src');
const srcFile = (p) => join(srcDir, ...p.split('/'));
/** How the bundle, the chunks and src/lazy-chunk.ts name a module of src/: 'src/log.ts'. */
const srcKey = (abs) => relative(root, abs).split(sep).join('/');
/** A chunk's require() of a module the main bundle holds (src/lazy-chunk.ts answers it). */
const HOST_PREFIX = 'pinclaw-host:';
/** The generated module that hands the bundle's modules to src/lazy-chunk.ts. */
const REGISTRY = 'pinclaw:host-modules';

/**
 * Lazy chunks (see src/lazy-chunk.ts). Code an idle gateway never runs belongs here: every KiB in the
 * main bundle costs idle memory. A dynamic import() of one of a chunk's `entries` (a package name or
 * a file of src/), in the bundle or in another chunk, becomes loadLazyChunk(name)[entry]; a static
 * import of an entry in the bundle is a build error (in a chunk, see below). A chunk holds its entries and whatever they import, except:
 * - a module of src/ that the main bundle holds: taken from the bundle at run time (one instance per
 *   process, so the logger, the errors, the store and the native loader are shared); the bundle
 *   registers exactly those, as the chunks' builds ask for them;
 * - another chunk's entry: reached through that chunk.
 * A module of src/ that the main bundle does not hold may be in one chunk only: two chunks would each
 * have their own copy with its own state, so that is a build error (import it from the bundle, or
 * keep it to one chunk). A module of src/ that only a chunk uses must not be imported by the bundle
 * just to share it: that makes it part of what an idle gateway holds. Likewise what a chunk takes
 * from the bundle must be code the bundle has anyway: a module whose exports the bundle mostly
 * tree-shakes would grow by what the chunk uses, and the build refuses more than a little of that
 * (REGISTRY_GROWTH_LIMIT). Such a module may be listed in the chunk's `copies` (as 'src/...'): the
 * chunk then holds its own copy, which is right only for a module that keeps no state.
 * A chunk may import another chunk's entry statically: that chunk is loaded when this one starts.
 * `inject`: files whose exports replace the globals of the same name in the chunk (esbuild's inject).
 */
export const lazyChunks = [
  // unloadable: the idle release drops it (src/agent/providers/anthropic.ts), 1.9 MiB of V8 heap.
  // `inject`: the SDK's global Headers and FormData are pinclaw's (see the file), not undici's.
  { name: 'anthropic-sdk', entries: ['@anthropic-ai/sdk'], unloadable: true, inject: [srcFile('agent/providers/sdk-web-globals.ts')] },
  { name: 'html', entries: [srcFile('tools/web/html.ts')] },
  // Telegram's Markdown renderer (marked): loaded with the first Telegram reply.
  { name: 'telegram-format', entries: [srcFile('channels/telegram/format.ts')] },
  // The Telegram channel: loaded by a gateway that has a token. Its pairing uses most of
  // src/store/pairing.ts, of which the bundle holds a little: a copy, as it keeps no state.
  // Its second entry: onboarding's wait for the owner's message, which uses the same Bot API client.
  { name: 'telegram', entries: [srcFile('channels/telegram/channel.ts'), srcFile('channels/telegram/owner-chat.ts')], copies: ['src/store/pairing.ts', 'src/channels/pairing-hint.ts'] },
  // The Signal channel (a signal-cli daemon's client): loaded by a gateway with channels.signal.url.
  // Its pairing uses most of src/store/pairing.ts, of which the bundle holds a little: a copy.
  // Its second entry: doctor's check of the daemon (GET /api/v1/check).
  { name: 'signal', entries: [srcFile('channels/signal/channel.ts'), srcFile('channels/signal/daemon-check.ts')], copies: ['src/store/pairing.ts', 'src/channels/pairing-hint.ts'] },
  // The Discord channel (gateway v10 over the ws package, REST over fetch): loaded by a
  // gateway with channels.discord.token. Pairing: a copy, as above.
  { name: 'discord', entries: [srcFile('channels/discord/channel.ts')], copies: ['src/store/pairing.ts', 'src/channels/pairing-hint.ts'] },
  // The Matrix channel (client-server API /sync and sends over fetch): loaded by a gateway with
  // channels.matrix.homeserver and accessToken. Pairing: a copy, as above. Its second entry: doctor's
  // check of the homeserver (versions, whoami).
  { name: 'matrix', entries: [srcFile('channels/matrix/channel.ts'), srcFile('channels/matrix/check.ts')], copies: ['src/store/pairing.ts', 'src/channels/pairing-hint.ts'] },
  // The memory's implementation (src/memory/holder.ts opens it on first use) and its export/import.
  {
    name: 'memory',
    entries: [srcFile('memory/memory.ts'), srcFile('memory/embedders/index.ts'), srcFile('memory/transfer.ts')],
    // The ranking index: the bundle holds a sliver of these (the doctor's self-test of the addon),
    // the memory all of them. They keep no state but a CRC table cache (the addon itself is loaded
    // once, by the bundle's loader); taken from the bundle they would add ~20 KB to it.
    copies: ['ranking.ts', 'ranking-reference.ts', 'ranking-reference-codec.ts', 'ranking-input.ts', 'ranking-codec.ts', 'ranking-vectors.ts', 'ranking-text.ts'].map((f) => `src/native/${f}`),
  },
  // `pinclaw memory ...`
  { name: 'memory-cli', entries: [srcFile('cli/memory-command.ts')] },
  // croner, the cron arithmetic and the run log: loaded when a job is added, changed or falls due (a
  // gateway whose jobs are not due never loads it); the cron tools' work, and `pinclaw cron ...`.
  {
    name: 'scheduler',
    entries: ['schedule.ts', 'fire.ts', 'cron-actions.ts'].map((f) => srcFile(`scheduler/${f}`)).concat(srcFile('cli/cron-command.ts')),
    // The delivery targets (owner.notify, --deliver): pure functions over the config, copied.
    copies: ['src/scheduler/targets.ts'],
  },
  // hardware.sensors: their reader and sensor_read, loaded when sensors are named.
  { name: 'sensors', entries: ['reader.ts', 'tool.ts'].map((f) => srcFile(`hardware/sensors/${f}`)) },
  // MQTT: the mqtt package, the broker connection, the MQTT chat, Home Assistant discovery, MQTT
  // triggers and the fleet's remote tools; loaded by a gateway with mqtt.url set. The MQTT chat's
  // pairing uses most of src/store/pairing.ts, of which the bundle holds a little (the dashboard's
  // pairing): a copy here, as it keeps no state (functions over the database).
  { name: 'mqtt', entries: [srcFile('channels/mqtt/start.ts')], copies: ['src/store/pairing.ts'] },
  // The MCP client (src/mcp/client/): loaded by a gateway or `pinclaw mcp` when mcp.servers has an
  // enabled server. `pinclaw mcp ...` itself is in the same chunk: run by the owner, never idle.
  // Its Landlock servers and the sweep of leftovers use slivers of stateless sandbox modules the
  // bundle holds (signal names, the /proc table, the addon's event kinds): copies.
  { name: 'mcp-client', entries: [srcFile('mcp/client/index.ts'), srcFile('cli/mcp-command.ts')], copies: ['src/sandbox/signals.ts', 'src/sandbox/proc-table.ts', 'src/sandbox/native.ts'] },
  // `pinclaw status` and `doctor --probe`: the owner's look at the installation, never run by a gateway.
  { name: 'cli-info', entries: [srcFile('cli/status-command.ts'), srcFile('ops/probe.ts')], copies: ['src/store/queue.ts', 'src/conductor/provider-outcome.ts', 'src/channels/status.ts', 'src/proc-locks.ts'] },
  // The dashboard's admin views (Home, Cron, Pairings, Logs, Config): loaded by the first request for
  // one of them. Its pairings use most of src/store/pairing.ts, of which the bundle holds a little: a copy.
  { name: 'dashboard-admin', entries: [srcFile('channels/http/admin/routes.ts')], copies: ['src/store/pairing.ts'] },
  // Command hooks (hooks.* in the config): their engine and runner, loaded by the first hook to run.
  // doctor's hooks check is here too: run by the owner, never by an idle gateway.
  { name: 'hooks', entries: [srcFile('hooks/engine.ts'), srcFile('hooks/doctor.ts')] },
  // `pinclaw backup`, `restore`, `onboard`, `service` and `logs` (which finds the unit `service` wrote),
  // doctor's service check: run once in a while, never by a gateway.
  // The gateway uses a sliver of backup-leftovers.ts (removing what a killed backup left); the
  // backup uses the rest. It keeps no state, so the chunk holds its own copy. Onboarding asks
  // guard.ts's isLoopback (is the dashboard on the LAN?), a pure function: a copy as well.
  // `pinclaw skills ...` is here too: it reads .tar.gz archives with the backup's reader (src/archive.ts),
  // which may be in one chunk only.
  { name: 'ops-cli', entries: [srcFile('cli/backup-command.ts'), srcFile('cli/onboard-command.ts'), srcFile('cli/service-command.ts'), srcFile('cli/logs-command.ts'), srcFile('ops/service-check.ts'), srcFile('cli/skills-command.ts'), srcFile('ops/systemd.ts'), srcFile('ops/service-unit.ts'), srcFile('ops/backup.ts')], copies: ['src/ops/backup-leftovers.ts', 'src/channels/http/guard.ts'] },
  // Voice notes: ffmpeg conversion, speech to text, text to speech (src/voice/) and a saved voice
  // note's transcription; loaded by the first turn with a voice note or voice reply, and by
  // `pinclaw voice ...`.
  { name: 'voice', entries: [srcFile('voice/index.ts'), srcFile('cli/voice-command.ts')], copies: ['src/placeholders.ts'] },
  // Pictures for the model (ffmpeg scaling, src/images/): loaded by the first turn with a photo or
  // the first snapshot. The camera (hardware.cameras, src/hardware/camera/): loaded when one is named.
  { name: 'images', entries: [srcFile('images/index.ts')] },
  // The program runner both of those chunks use (src/run-program.ts): a chunk of its own, as a module
  // outside the bundle may be in one chunk only.
  { name: 'program', entries: [srcFile('run-program.ts')] },
  // fetch() over node:http (src/net/http-fetch.ts): loaded by the first request a gateway makes (the
  // model's API, a chat channel), reached through src/net/fetch.ts.
  { name: 'http-fetch', entries: [srcFile('net/http-fetch.ts')] },
  // The Fetch standard's Headers (src/net/fetch-headers.ts): http-fetch's answers and the Anthropic
  // SDK's requests use the same class, so a chunk of its own, which both import statically.
  { name: 'fetch-headers', entries: [srcFile('net/fetch-headers.ts')] },
  { name: 'camera', entries: [srcFile('hardware/camera/index.ts')] },
  // `pinclaw mcp serve`: the MCP server over stdio (src/mcp/server/), never run by a gateway.
  { name: 'mcp-serve', entries: [srcFile('cli/mcp-serve-command.ts')] },
  // `pinclaw update`, the daily update check and the check of update.* (src/update/): run by the owner,
  // once a day, or at a start with update.* set; never by an idle gateway with the defaults.
  // `pinclaw migrate openclaw`: the OpenClaw home's readers (json5 with them), the mapping and the
  // writes; run once by the owner, never by a gateway.
  { name: 'migrate', entries: [srcFile('cli/migrate-command.ts')] },
  { name: 'update', entries: [srcFile('cli/update-command.ts'), srcFile('update/daily-check.ts'), srcFile('update/config-check.ts')], copies: ['src/scheduler/targets.ts', 'src/version.ts', 'src/fsutil.ts'] },
];

/** The name of an entry in its chunk's exports and in the import that stands for it. */
const entryKey = (entry) => (entry.startsWith('/') ? srcKey(entry) : entry);

/**
 * Turns a dynamic import() of another chunk's entry into a load of that chunk. `registry`: in the
 * main bundle, the modules to register before the first chunk runs (null in a chunk's build, where
 * src/lazy-chunk.ts is itself taken from the bundle).
 */
function lazyShim(self, registry) {
  const byEntry = new Map(lazyChunks.filter((c) => c !== self).flatMap((c) => c.entries.map((e) => [e, c])));
  return {
    name: 'pinclaw-lazy-chunks',
    setup(b) {
      b.onResolve({ filter: /.*/ }, (args) => {
        if (args.namespace !== 'file' || args.importer === '' || args.path.startsWith('node:')) return undefined;
        const entry = args.path.startsWith('.') ? join(args.resolveDir, args.path).replace(/\.js$/, '.ts') : args.path;
        const chunk = byEntry.get(entry);
        if (!chunk) return undefined;
        // A static import in the bundle would evaluate the chunk when the bundle starts, which defeats
        // it. In a chunk it loads the other chunk when this one starts: for a chunk that always needs it.
        if (args.kind !== 'dynamic-import' && !self) {
          return { errors: [{ text: `${args.importer} imports ${args.path} statically; it is in the lazy chunk '${chunk.name}': use await import() (a type-only import is fine)` }] };
        }
        return { path: entryKey(entry), namespace: 'pinclaw-lazy', pluginData: chunk };
      });
      b.onLoad({ filter: /.*/, namespace: 'pinclaw-lazy' }, (args) => {
        const chunk = args.pluginData;
        // An unloadable chunk's entry is a view that looks the chunk up on each use: the module cache
        // around this stub must not hold the chunk's exports, or unloading it would free nothing.
        const get = chunk.unloadable ? 'lazyChunkView' : 'loadLazyChunk';
        const call = `require(${JSON.stringify(lazyLoaderPath)}).${get}(${JSON.stringify(chunk.name)}${chunk.unloadable ? `, ${JSON.stringify(args.path)})` : `)[${JSON.stringify(args.path)}]`}`;
        // The registration first: the chunk's require() of a bundle module is answered from it.
        return { contents: `${registry ? `require(${JSON.stringify(REGISTRY)});\n` : ''}module.exports = ${call};`, loader: 'js', resolveDir: root };
      });
      if (!registry) return;
      b.onResolve({ filter: /^pinclaw:host-modules$/ }, () => ({ path: REGISTRY, namespace: 'pinclaw-registry' }));
      // Evaluated with the first chunk, not at start: `import * as` of modules the bundle holds
      // anyway adds no module to it (the build checks), only their namespace objects and exports
      // the bundle itself does not use (the build limits those, see REGISTRY_GROWTH_LIMIT).
      b.onLoad({ filter: /.*/, namespace: 'pinclaw-registry' }, () => {
        const lines = [
          `import { registerHostModules } from ${JSON.stringify(lazyLoaderPath)};`,
          ...registry.map((key, i) => `import * as m${i} from ${JSON.stringify(join(root, key))};`),
          `registerHostModules({\n${registry.map((key, i) => `  ${JSON.stringify(key)}: m${i},`).join('\n')}\n});`,
        ];
        return { contents: lines.join('\n'), loader: 'js', resolveDir: root };
      });
    },
  };
}

/**
 * In a chunk's build: a module of src/ that the bundle holds (`host`) is required from it, and `used`
 * collects it.
 */
function hostShim(host, used) {
  const again = Symbol('resolving');
  return {
    name: 'pinclaw-host-modules',
    setup(b) {
      // Modules of src/ are imported by relative paths from src/, or by absolute paths from the
      // build's generated modules; a package's own imports are left alone (and resolved faster).
      b.onResolve({ filter: /^[./]/ }, async (args) => {
        if (args.pluginData === again || !args.resolveDir || (args.namespace === 'file' && !args.importer.startsWith(srcDir + sep))) return undefined;
        const r = await b.resolve(args.path, { kind: args.kind, importer: args.importer, resolveDir: args.resolveDir, pluginData: again });
        if (r.errors.length || r.external || r.namespace !== 'file' || !host.has(srcKey(r.path))) return undefined;
        used.add(srcKey(r.path));
        return { path: srcKey(r.path), namespace: 'pinclaw-host' };
      });
      // A module, not a bare external, so that a static import, a require() and an import() of a
      // bundle module all come out as a require() that src/lazy-chunk.ts answers.
      b.onLoad({ filter: /.*/, namespace: 'pinclaw-host' }, (args) => ({ contents: `module.exports = require(${JSON.stringify(HOST_PREFIX + args.path)});`, loader: 'js' }));
      b.onResolve({ filter: /^pinclaw-host:/ }, (args) => ({ path: args.path, external: true }));
    },
  };
}

const common = (version) => ({
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  minify: true,
  legalComments: 'none',
  logLevel: 'warning',
  // The metafile's input paths (src/...) are relative to it, whatever the caller's directory.
  absWorkingDir: root,
  define: { __PINCLAW_VERSION__: JSON.stringify(version), __PINCLAW_V8_FLAGS__: JSON.stringify(V8_FLAGS) },
});

/** The modules of src/ in a build, by srcKey. */
const srcInputs = (metafile) => Object.keys(metafile.inputs).filter((f) => f.startsWith('src/'));
/** Bytes each input contributes to a build's one output. */
const outputBytes = (metafile) => Object.fromEntries(Object.entries(Object.values(metafile.outputs)[0].inputs).map(([f, i]) => [f, i.bytesInOutput]));

/**
 * Builds the chunks next to the bundle, each taking the modules of src/ in `host` (the main bundle's)
 * from the bundle. Returns the chunks and the bundle modules they use, which the bundle must register.
 * Refuses a module of src/ outside the bundle that two chunks would each hold.
 */
async function buildChunks(dir, version, host) {
  // A chunk dropped from lazyChunks must not linger from an earlier build: the dev tree would
  // still find it (src/lazy-chunk.ts reads dist/lazy/<name>.cjs).
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const resolveFrom = createRequire(join(root, 'package.json'));
  for (const c of lazyChunks) {
    const stray = (c.copies ?? []).filter((f) => !host.has(f));
    if (stray.length) throw new Error(`the lazy chunk '${c.name}' lists ${stray.join(', ')} in copies, but the main bundle does not hold it: remove it from copies (it is the chunk's own module anyway)`);
  }
  const built = await Promise.all(lazyChunks.map(async (c) => {
    const file = join(dir, `${c.name}.cjs`);
    const copies = new Set(c.copies ?? []);
    const shared = new Set([...host].filter((f) => !copies.has(f)));
    const used = new Set();
    // Each entry is evaluated when first asked for, so a chunk of several runs only what is used;
    // kept, so that every import() of an entry sees one module object.
    const stdin = {
      contents: [
        ...c.entries.map((_, i) => `let e${i};`),
        `module.exports = {`,
        ...c.entries.map((e, i) => `  get ${JSON.stringify(entryKey(e))}() { return (e${i} ??= require(${JSON.stringify(e.startsWith('/') ? e : resolveFrom.resolve(e))})); },`),
        `};`,
      ].join('\n'),
      loader: 'js',
      resolveDir: root,
      sourcefile: `lazy-chunk:${c.name}`,
    };
    const r = await build({
      ...common(version),
      stdin,
      outfile: file,
      metafile: true,
      banner: { js: 'var __pinclaw_import_meta_url = require("url").pathToFileURL(__filename).href;' },
      ...(c.inject ? { inject: c.inject } : {}),
      define: { ...common(version).define, 'import.meta.url': '__pinclaw_import_meta_url' },
      plugins: [lazyShim(c, null), hostShim(shared, used), nativeShim, lazyBuiltinsOf(CHUNK_LAZY_BUILTINS, false)],
    });
    const own = srcInputs(r.metafile).filter((f) => !c.entries.includes(join(root, f)) && !copies.has(f));
    const doubled = own.filter((f) => host.has(f));
    if (doubled.length) throw new Error(`the lazy chunk '${c.name}' holds ${doubled.join(', ')}, which the main bundle holds too (imported in a way the build did not map)`);
    return { name: c.name, file, own, used };
  }));
  const owner = new Map();
  for (const c of built) {
    for (const f of c.own) {
      if (owner.has(f)) throw new Error(`${f} is in the lazy chunks '${owner.get(f)}' and '${c.name}' and not in the main bundle: each would have its own copy with its own state. Import it from the bundle (a module the bundle evaluates anyway) or from one chunk only`);
      owner.set(f, c.name);
    }
  }
  const registry = [...new Set(built.flatMap((c) => [...c.used]))].sort();
  return { chunks: built.map(({ name, file }) => ({ name, file })), registry };
}

/**
 * What registering the chunks' modules may add to the bundle's own code: the namespace objects of
 * the shared modules (~100 bytes each), the exports only chunks use (store/pairing's claimPrompt for
 * Telegram, queue's inboundById for the chat channels) and the minifier's renaming: ~6.4 KB with 15
 * chunks (about 60 shared modules). Far more means a chunk uses much of a module the bundle barely
 * holds (tree-shaken from the bundle): see `copies` in lazyChunks. Raised from 6 to 7 KiB when the
 * dashboard's admin chunk and the CLI's status chunk came: ~100 bytes per shared module is the price
 * of one instance of the logger, the store and the config on both sides. Raised to 9 KiB with batch
 * three's chunks (voice, images and camera, update, signal): each shares the logger, the config and
 * the store again; bench:footprint's idle RssAnon, the figure this guards, is measured with them.
 */
const REGISTRY_GROWTH_LIMIT = 9216;

// Which addon a package's loader call stands for, by the path of the file that makes the call.
const owners = [
  [/[\\/]better-sqlite3[\\/]/, 'better_sqlite3'],
  [/[\\/]@serialport[\\/]bindings-cpp[\\/]/, 'serialport'],
  [/[\\/]i2c-bus[\\/]/, 'i2c'],
];

const nativeShim = {
  name: 'pinclaw-native-shim',
  setup(b) {
    b.onResolve({ filter: /^(bindings|node-gyp-build)$/ }, (args) => {
      const owner = owners.find(([re]) => re.test(args.importer));
      if (!owner) return { errors: [{ text: `${args.importer} loads a native addon pinclaw does not know; add it to src/native/loader.ts` }] };
      return { path: owner[1], namespace: 'pinclaw-addon' };
    });
    b.onLoad({ filter: /.*/, namespace: 'pinclaw-addon' }, (args) => ({
      // CommonJS on purpose: i2c-bus calls require('bindings')(...) directly.
      contents: `const { loadAddon } = require(${JSON.stringify(loaderPath)});
module.exports = function () { return loadAddon(${JSON.stringify(args.path)}); };
module.exports.default = module.exports;`,
      loader: 'js',
      resolveDir: root,
    }));
  },
};

/**
 * Node's built-in modules that an idle gateway does not use, required on first use rather than when
 * the bundle starts. A bundle's imports of built-ins are all evaluated at its start, and these are
 * not small: node:crypto alone is 17 internal modules and OpenSSL's setup, ~1.3 MiB of anonymous
 * memory and ~1 MiB of the executable's pages; with readline, worker_threads, perf_hooks and the
 * rest, ~2 MiB and ~4.5 MiB (measured against a bare server, see bench/README.md, footprint).
 * node:fs/promises brings node:readline and the REPL's history with it (for FileHandle.readLines):
 * five internal modules a gateway's start compiled for nothing until it was listed here.
 * Each stands for an object whose property reads load the real module: the bundle reads an import's
 * properties where it uses them (`(0, import_node_crypto.randomBytes)(…)`), so nothing changes for
 * the code but the moment of loading. esbuild's interop (`__toESM`) makes each importing file, at
 * every start, an object with the module's prototype and a getter for each of its own keys: the
 * names the module has in the Node that builds (what the types allow the code to use) are getters
 * of the prototype, so that copy is an empty object whose reads go to them; a name only the running
 * Node has is still read, through a Proxy as the prototype's prototype. (The whole object was a
 * Proxy until 2026-11-29, whose traps made those copies ~4 ms of a warm gateway start; then its own
 * getters, copied 1,190 times over 34 imports in a gateway's start, 1.2-1.8 ms of the dev bundle's.)
 * node:tty is small, but src/cli/terminal.ts, which a gateway's first turn evaluates, asks it only on
 * the command line: lazy, a gateway never loads it. Each is loaded through builtinLoad (below).
 */
const LAZY_BUILTINS = ['child_process', 'crypto', 'dgram', 'dns', 'dns/promises', 'fs/promises', 'perf_hooks', 'readline', 'readline/promises', 'timers/promises', 'tty', 'v8', 'vm', 'worker_threads', 'zlib'];
/**
 * In the lazy chunks, only node:https (with node:tls, 0.5-1.6 MiB of anonymous memory in a bare Node
 * 24.21): a chunk is loaded when it is used, so its other built-ins are wanted, but whether it needs
 * TLS depends on the URL it is given. src/net/http-fetch.ts talks to the gateway (`pinclaw status`)
 * and to a local model over http:, src/skills/source.ts lists skills as well as downloading them, the
 * mqtt chunk serves mqtt:// as well as mqtts://.
 */
const CHUNK_LAZY_BUILTINS = ['https'];
export const lazyBuiltins = lazyBuiltinsOf(LAZY_BUILTINS, true);
/** `viaFlags`: through builtinLoad (the bundle's); a chunk's require does that itself (src/lazy-chunk.ts). */
function lazyBuiltinsOf(modules, viaFlags) {
  return {
    name: 'pinclaw-lazy-builtins',
    setup(b) {
      const filter = new RegExp(`^(node:)?(${modules.map((m) => m.replace('/', '\\/')).join('|')})$`);
      b.onResolve({ filter }, (args) => (args.namespace === 'pinclaw-lazy-builtin' ? undefined : { path: args.path.replace(/^node:/, ''), namespace: 'pinclaw-lazy-builtin' }));
      b.onLoad({ filter: /.*/, namespace: 'pinclaw-lazy-builtin' }, async (args) => {
        const keys = Object.getOwnPropertyNames(await import(`node:${args.path}`)).filter((k) => k !== 'default');
        return {
          contents: `let m;
const load = () => (m ??= ${viaFlags ? builtinLoad(args.path) : `require(${JSON.stringify(`node:${args.path}`)})`});
const names = Object.create(new Proxy({}, { get: (_, k) => load()[k], has: (_, k) => k in load() }));
for (const k of ${JSON.stringify(keys)}) Object.defineProperty(names, k, { configurable: true, enumerable: true, get: () => load()[k] });
module.exports = Object.create(names);`,
          loader: 'js',
          resolveDir: root,
        };
      });
    },
  };
}

/**
 * The code that requires the built-in `name` where the executable may have set its V8 flags: through
 * src/v8-flags.ts loadBuiltin, which sets V8's defaults for the load so that Node's code cache of the
 * module is taken (compiled under other flags it costs 2-3 times as much). Required when first used,
 * so that the bundle's own start does not evaluate src/v8-flags.ts early. node:v8 is what
 * loadBuiltin sets the flags with (and the loader has it loaded before any flag is set).
 */
function builtinLoad(name) {
  const load = `require(${JSON.stringify(`node:${name}`)})`;
  return name === 'v8' ? load : `require(${JSON.stringify(v8FlagsPath)}).loadBuiltin(${JSON.stringify(name)}, () => ${load})`;
}

/**
 * esbuild escapes what is not ASCII in strings and identifiers, but not in a regular expression
 * literal; one character above U+00FF left there makes V8 hold the whole file's source as a
 * two-byte string: the bundle's 0.5 MiB of idle memory more (measured). Write such characters as
 * \u escapes.
 */
function checkAscii(file) {
  const text = readFileSync(file, 'latin1');
  const at = text.search(/[^\x00-\x7f]/);
  if (at < 0) return;
  const line = text.slice(0, at).split('\n').length;
  const around = readFileSync(file, 'utf8').split('\n')[line - 1] ?? '';
  const col = around.search(/[^\x00-\x7f]/);
  throw new Error(`${file}:${line}: a character that is not ASCII (${JSON.stringify(around.slice(Math.max(0, col - 40), col + 20))}): write it as a \\u escape in the source (a regular expression literal keeps it as is), so that V8 can hold the code as a one-byte string`);
}

export async function bundle({ outfile = join(root, 'dist', 'pinclaw.cjs'), quiet = false, analyze = false } = {}) {
  const version = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version;
  const started = Date.now();
  const main = (registry, write) => build({
    ...common(version),
    entryPoints: [join(root, 'src', 'main.ts')],
    outfile,
    write,
    metafile: true,
    banner: { js: 'var __pinclaw_import_meta_url = require("url").pathToFileURL(__filename).href;' },
    define: { ...common(version).define, 'import.meta.url': '__pinclaw_import_meta_url' },
    plugins: [lazyShim(null, registry), nativeShim, lazyBuiltins],
  });
  // Three steps: which modules of src/ the bundle holds decides what the chunks take from it, and
  // what they take decides what the bundle registers for them.
  const before = (await main([], false)).metafile;
  const host = new Set(srcInputs(before));
  const { chunks, registry } = await buildChunks(join(dirname(outfile), 'lazy'), version, host);
  const after = (await main(registry, true)).metafile;
  const added = srcInputs(after).filter((f) => !host.has(f));
  if (added.length) throw new Error(`registering the modules the lazy chunks use added ${added.join(', ')} to the bundle`);
  const [was, is] = [outputBytes(before), outputBytes(after)];
  const grown = Object.keys(is).filter((f) => !f.startsWith('pinclaw-') && is[f] > (was[f] ?? 0)).map((f) => ({ f, by: is[f] - (was[f] ?? 0) })).sort((x, y) => y.by - x.by);
  const growth = grown.reduce((n, g) => n + g.by, 0);
  if (growth > REGISTRY_GROWTH_LIMIT) {
    throw new Error(`what the lazy chunks take from the bundle adds ${growth} bytes of code to it (${grown.slice(0, 8).map((g) => `${g.f} +${g.by}`).join(', ')}): that code is only the chunks'. List such modules in the chunk's copies if they keep no state (see lazyChunks), or import them differently`);
  }
  for (const file of [outfile, ...chunks.map((c) => c.file)]) checkAscii(file);
  // Next to the bundle, where dashboard.ts looks; cleared first so a file deleted from the source does not linger.
  rmSync(join(dirname(outfile), 'dashboard'), { recursive: true, force: true });
  cpSync(dashboardDir, join(dirname(outfile), 'dashboard'), { recursive: true });
  if (!quiet) {
    const kb = (f) => `${(statSync(f).size / 1024).toFixed(0)} KiB`;
    console.error(`bundle: ${outfile} (${kb(outfile)}) in ${Date.now() - started} ms; lazy chunks: ${chunks.map((c) => `${c.name} ${kb(c.file)}`).join(', ')}; ${registry.length} bundle modules shared with them (+${growth} B)`);
  }
  if (analyze) console.error(analysis(after));
  return { outfile, chunks };
}

/**
 * What the main bundle is made of, by bytes in the output: packages as one line each, modules of
 * src/ by directory and file. An idle gateway parses and holds all of it, so this is where to look
 * for code to move into a lazy chunk (see lazyChunks).
 */
function analysis(metafile, top = 40) {
  const groups = new Map();
  for (const [file, bytes] of Object.entries(outputBytes(metafile))) {
    const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file);
    const key = pkg ? `package ${pkg[1]}` : file.startsWith('src/') ? file : `other ${file}`;
    groups.set(key, (groups.get(key) ?? 0) + bytes);
  }
  const total = [...groups.values()].reduce((a, b) => a + b, 0);
  const dirs = new Map();
  for (const [key, bytes] of groups) if (key.startsWith('src/')) dirs.set(key.split('/').slice(0, 2).join('/'), (dirs.get(key.split('/').slice(0, 2).join('/')) ?? 0) + bytes);
  const rows = (m) => [...m].sort((a, b) => b[1] - a[1]).slice(0, top).map(([k, b]) => `${(b / 1024).toFixed(1).padStart(8)} KiB  ${((100 * b) / total).toFixed(1).padStart(5)}%  ${k}`);
  return [`main bundle: ${(total / 1024).toFixed(0)} KiB of code by input (minified)`, ...rows(groups), '', 'by directory of src/ and package:', ...rows(new Map([...dirs, ...[...groups].filter(([k]) => !k.startsWith('src/'))]))].join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  bundle({ quiet: process.argv.includes('--quiet'), analyze: process.argv.includes('--analyze') }).catch((err) => {
    console.error(err.message ?? err);
    process.exit(1);
  });
}
