'use strict';
// The single executable's entry (scripts/build-sea.mjs makes it the SEA's main script): it runs the
// bundle, dist/pinclaw.cjs, which the executable carries as the asset main/pinclaw.cjs, compiled
// with the V8 code cache in main/pinclaw.cache.
//
// Why not the bundle as the main script with Node's own code cache (useCodeCache): that cache is
// made by compiling the bundle without running it, so it holds only the top-level code, and every
// function a start runs (the command's module initializers, the config checks, the store, the
// gateway's wiring) was compiled again at every start. build-sea.mjs instead runs a gateway start
// of the executable once (PINCLAW_CODE_CACHE_OUT) and keeps V8's code cache of everything that start
// compiled: a warm gateway start compiles almost nothing (bench/README.md, startup).
//
// V8 checks the cache against its version, its flags and the source; a cache it refuses is ignored
// and the bundle compiled as usual, so a mismatch costs time, never correctness.
//
// VERSION is replaced by build-sea.mjs: `pinclaw --version`, asked by scripts and `pinclaw update`,
// is answered here without compiling the bundle (the same line src/main.ts writes).
const args = process.argv.slice(2);

if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
  try {
    require('node:fs').writeSync(1, 'pinclaw VERSION\n');
  } catch {
    // a reader that closed the pipe: its choice
  }
} else {
  // V8's flags (V8_FLAGS, replaced by build-sea.mjs) are set here, not in the executable's execArgv:
  // V8 takes Node's own code cache of a built-in module (node:http, node:net, node:stream, ...) only
  // under the flags it was made with, Node's defaults; with any other flag set every built-in a
  // start loads is compiled from its source. Measured (bare Node 24.21, best of five): node:http
  // 3.8 ms against 18.8 with --optimize-for-size, the ten a gateway loads 7.9 against 42.2. So the
  // built-ins the command is known to load are loaded first, under the defaults, and the flags set
  // before the bundle runs: none of the bundle's code runs without them (the regular-expression
  // fallback, src/regex-engine.ts), and the bundle's own code cache is made under them. (V8 fixes a
  // pattern's backtrack limit when it compiles it to machine code, at its second run: only a pattern
  // the loading below ran twice could keep code without the fallback, as in a bare Node.)
  // A built-in first loaded after the flags is loaded under V8's defaults where the build routes it
  // through src/v8-flags.ts loadBuiltin (the bundle's lazy built-ins, every require of a lazy chunk);
  // anywhere else it is compiled under the flags (test/sea.test.ts looks for any in a gateway's
  // start and first turn, a one-shot turn and two commands).
  const command = args.find((a, i) => !a.startsWith('-') && args[i - 1] !== '--home' && args[i - 1] !== '--config');
  // What a gateway's start loads before it listens. Not node:dns: the gateway binds an IPv4 literal
  // without a lookup (src/net/listen-on.ts), and a request that needs one loads it after listening.
  if (command === 'gateway') for (const name of ['node:http', 'node:child_process', 'node:cluster']) require(name);
  // Every command: what the bundle's top level loads (node:os, node:module), its stdio streams
  // (main.ts) and the argument parser (src/cli/args.ts).
  require('node:os');
  require('node:module');
  void process.stdout;
  void process.stderr;
  void require('node:util').parseArgs;
  const sea = require('node:sea');
  const { Script } = require('node:vm');
  const v8 = require('node:v8');
  for (const flag of V8_FLAGS) v8.setFlagsFromString(flag);
  // The bundle is ASCII (scripts/build.mjs checkAscii): latin1 makes the one-byte string V8 keeps.
  const source = Buffer.from(sea.getRawAsset('main/pinclaw.cjs')).toString('latin1');
  let cachedData;
  try {
    cachedData = new Uint8Array(sea.getRawAsset('main/pinclaw.cache'));
  } catch {
    // the first of build-sea.mjs's two builds, which makes the cache, has none
  }
  const script = new Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
    filename: __filename,
    ...(cachedData ? { cachedData } : {}),
  });
  // For test/sea.test.ts and for a look at a start that seems slow: whether V8 took the cache.
  if (process.env.PINCLAW_CODE_CACHE_REPORT) require('node:fs').writeSync(2, `code cache: ${!cachedData ? 'none' : script.cachedDataRejected ? 'rejected' : 'accepted'}\n`);
  const cacheOut = process.env.PINCLAW_CODE_CACHE_OUT;
  if (cacheOut) {
    // At exit the functions the run compiled are all in the script's cache. V8 refuses a cache made
    // under other flags, and the bundle may change one for its start (src/v8-flags.ts): made under
    // the flags set above, which every start compiles under.
    process.once('exit', () => {
      for (const flag of V8_FLAGS) v8.setFlagsFromString(flag);
      require('node:fs').writeFileSync(cacheOut, script.createCachedData());
    });
  }
  script.runInThisContext()(exports, require, module, __filename, __dirname);
}
