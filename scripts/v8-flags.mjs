// The V8 flags of the single executable, in one place: build-sea.mjs sets them for the SEA blob's
// build and writes them into the loader (scripts/sea-main.cjs), which sets them at run time;
// build.mjs gives V8_FLAGS to the bundle (__PINCLAW_V8_FLAGS__), whose src/v8-flags.ts sets V8's
// defaults for the moment a built-in module is first loaded, and these again after it.

/**
 * V8's linear-time fallback for regular expressions (src/regex-engine.ts), on from the first
 * instruction: set here, the executable need not load node:v8 to set them at start (node:v8 pulls in
 * node:stream: 12 ms of a 47 ms `--version`, measured with --cpu-prof on 2026-11-28).
 */
export const REGEX_FLAGS = ['--enable-experimental-regexp-engine-on-excessive-backtracks', '--enable-experimental-regexp-engine'];

/**
 * The executable's V8 flags (set by its loader, not in its execArgv: see below). --optimize-for-size: V8 grows the heap less eagerly and gives it back
 * sooner. Measured with npm run bench:footprint: an idle gateway's own memory (RssAnon) 15.6 ->
 * 13.2 MiB, its RSS after 2,000 turns 300 -> 127 MiB, for ~15% more CPU per turn (median 4.6 ->
 * 5.3 ms over five runs each; a model's answer takes seconds). On a board with 512 MB, memory is
 * what runs out first (see bench/README.md, footprint). --no-sparkplug: no baseline machine code
 * between the interpreter and the optimizing compilers. Its code pages stayed after the turns (V8 does
 * not flush baseline code by default): without it RssAnon after 10,000 turns +8.1 instead of +9.8 MiB
 * and the idle VmRSS 1.2 MiB lower, for 3.77 instead of 3.60 ms of CPU per turn (one run each).
 */
export const V8_FLAGS = ['--optimize-for-size', '--no-sparkplug', ...REGEX_FLAGS];
/**
 * The flags are set by the loader (scripts/sea-main.cjs) once the built-ins a start needs are
 * loaded, not in execArgv: any flag in execArgv makes V8 refuse Node's code cache of every built-in
 * module (its check covers the flags), and a gateway's start then compiled node:http, node:net,
 * node:stream and the rest from their sources. Set at run time, --optimize-for-size no longer sizes
 * the young generation when the heap is made (its implied --max-semi-space-size=1 is read only
 * then); --semi-space-growth-factor=1 keeps it at its first size instead (1 MiB semi-spaces, what
 * the implication gave), and is read whenever the young generation would grow. A start lifts that
 * hold until its first turn of the event loop (src/v8-flags.ts, which names the same flag).
 */
export const LOADER_V8_FLAGS = [...V8_FLAGS, '--semi-space-growth-factor=1'];
