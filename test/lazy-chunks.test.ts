// Lazy chunks that import the bundle's own modules (src/lazy-chunk.ts, scripts/build.mjs): the code
// of the Telegram channel and of the memory is in its chunk and not in the main bundle, no chunk holds
// a copy of a bundle module (the logger, the errors, the store, the chunk loader), and at run time a
// chunk logs through the bundle's logger, whose level the gateway set from the config.
import t, { type Test } from 'tap';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bundle, cleanEnv, start, tempDir } from './support/proc.js';
import { freePort } from './support/free-port.js';

const lazyDir = join(bundle, '..', 'lazy');
const chunkNames = ['telegram', 'telegram-format', 'memory', 'memory-cli', 'mqtt', 'sensors', 'cli-info', 'ops-cli', 'hooks', 'images', 'program', 'camera', 'update'];
const missing = !existsSync(bundle) || chunkNames.some((n) => !existsSync(join(lazyDir, `${n}.cjs`)));
const skip = missing ? 'no bundle with these chunks: run node scripts/build.mjs (npm test does)' : false;

t.test('the chunked modules are in their chunk only, the bundle modules in the bundle only', { skip }, async (t) => {
  const files: Record<string, string> = { bundle: readFileSync(bundle, 'utf8') };
  for (const f of readdirSync(lazyDir).filter((f) => f.endsWith('.cjs'))) files[f.replace(/\.cjs$/, '')] = readFileSync(join(lazyDir, f), 'utf8');
  const holders = (text: string) => Object.keys(files).filter((k) => files[k]!.includes(text));
  // A string each module writes (minified code keeps string literals), and where it must be.
  const where: [string, string, string][] = [
    ['src/channels/telegram/channel.ts', 'cannot reach the Bot API', 'telegram'],
    ['src/channels/telegram/poller.ts', 'deleteWebhook failed', 'telegram'],
    ['src/memory/memory.ts', 'building the search index', 'memory'],
    ['src/memory/memory-index.ts', 'the index snapshot has no readable header', 'memory'],
    ['src/cli/memory-command.ts', 'pinclaw memory add TEXT [--kind K] [--json]', 'memory-cli'],
    // MQTT: the mqtt package and everything that uses the broker, evaluated only with mqtt.url.
    ['mqtt (the package)', 'topicAliasMaximum from broker is out of range', 'mqtt'],
    ['src/mqtt/connection.ts', 'mqtt: not connected to ', 'mqtt'],
    ['src/fleet/remote.ts', 'it has no mqtt.fleet.key and answers no calls', 'mqtt'],
    ['src/fleet/home-assistant.ts', 'to let Home Assistant switch lines', 'mqtt'],
    ['src/hardware/sensors/tool.ts', 'Read a named sensor (hardware.sensors)', 'sensors'],
    // Cameras and pictures: evaluated only with hardware.cameras, or by a turn with a picture.
    ['src/hardware/camera/tools.ts', 'Take a still picture with a camera (hardware.cameras)', 'camera'],
    ['src/hardware/camera/source.ts', 'another program is using the camera', 'camera'],
    ['src/images/model-image.ts', 'even at the lowest JPEG quality', 'images'],
    ['src/images/attached.ts', 'could not be shown to you', 'images'],
    // The program runner of the images and voice chunks: a chunk of its own, loaded by the first program run.
    ['src/run-program.ts', 'name="ProgramRunError"', 'program'],
    // What the owner types to look at an installation: never run by a gateway.
    ['src/cli/status-command.ts', 'none recorded yet (no gateway has run in this home)', 'cli-info'],
    ['src/ops/probe.ts', 'answered a one-token request in', 'cli-info'],
    ['src/cli/logs-command.ts', 'whose log is in the journal, but journalctl is not on PATH', 'ops-cli'],
    // Command hooks: their engine and runner, evaluated only with hooks.* configured.
    ['src/hooks/run.ts', 'so its answer cannot be read', 'hooks'],
    ['src/hooks/engine.ts', 'vetoed earlier in this turn', 'hooks'],
    // `pinclaw skills`: the archive checks and the zip reader; the bundle keeps only the .disabled check.
    ['src/skills/source.ts', 'refused before anything was written', 'ops-cli'],
    ['src/skills/zip.ts', 'not a zip archive (no end of central directory record)', 'ops-cli'],
    // Voice: the conversion, the backends, a Telegram voice note and `pinclaw voice`, evaluated by the
    // first voice note or voice command; the Telegram chunk keeps only the per-chat /voice setting.
    ['src/voice/ffmpeg.ts', 'converting the audio (voice.ffmpeg)', 'voice'],
    ['src/voice/stt.ts', 'speech to text is not set up', 'voice'],
    ['src/voice/tts.ts', 'voice.tts.command has no {wav}', 'voice'],
    ['src/voice/voice-note.ts', 'I cannot listen to voice notes yet', 'voice'],
    ['src/cli/voice-command.ts', 'say needs -o FILE', 'voice'],
    ['src/voice/chat-setting.ts', 'voice.replies:', 'telegram'],
    // `pinclaw update` and the daily update check: never run by an idle gateway.
    ['src/update/minisign.ts', 'which is not trusted here', 'update'],
    ['src/update/updater.ts', 'stopped after the swap; finishing it', 'update'],
    // The bundle's own modules, which chunks use but must not copy.
    ['src/log.ts', 'PINCLAW_LOG_LEVEL', 'bundle'],
    ['src/errors.ts', 'name="UsageError"', 'bundle'],
    ['src/store/db.ts', 'cannot open database ', 'bundle'],
    ['src/lazy-chunk.ts', 'which this bundle does not provide', 'bundle'],
  ];
  for (const [module, text, file] of where) t.same(holders(text), [file], `${module} is in ${file} only`);
  // What they take instead: the bundle's instance, by a require that src/lazy-chunk.ts answers.
  for (const [chunk, modules] of Object.entries({ telegram: ['log', 'errors', 'lazy-chunk', 'store/queue'], memory: ['log', 'errors', 'store/statements', 'native/loader'], 'memory-cli': ['errors', 'setup/process', 'memory/holder', 'lazy-chunk'], hooks: ['sandbox/index', 'store/state', 'config/hooks'] })) {
    for (const m of modules) t.ok(files[chunk]!.includes(`require("pinclaw-host:src/${m}.ts")`), `${chunk} takes src/${m}.ts from the bundle`);
  }
  t.notOk(files.bundle!.includes('require("pinclaw-host:'), 'the bundle itself requires nothing from a host');
});


/** A gateway with Telegram pointed at a port nothing answers on, its log level from the config file. */
async function gateway(t: Test, level: 'warn' | 'error'): Promise<string> {
  const home = tempDir();
  // In the config file, not the environment: a second copy of src/log.ts would read the variable too.
  writeFileSync(join(home, 'config.json'), JSON.stringify({ log: { level } }));
  const port = await freePort();
  const gw = start(process.execPath, [bundle, 'gateway', '--port', String(port)], {
    env: cleanEnv({ PINCLAW_HOME: home, PINCLAW_CHANNELS_TELEGRAM_TOKEN: '1:x', PINCLAW_CHANNELS_TELEGRAM_API_BASE_URL: 'http://127.0.0.1:9' }),
  });
  t.teardown(() => gw.child.kill('SIGKILL'));
  // The gateway listens after the Telegram chunk was loaded and the channel started (its first
  // getMe fails at once): polled, as at level error the gateway says nothing.
  for (let i = 0; ; i++) {
    const up = await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false);
    if (up) break;
    if (i === 300) throw new Error(`the gateway did not come up; stderr:\n${gw.stderr()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  await new Promise((r) => setTimeout(r, 1500));
  gw.child.kill('SIGTERM');
  t.equal((await gw.exited).code, 0, 'the gateway stops cleanly');
  return gw.stderr();
}

t.test("a chunk logs through the bundle's logger, at the level the config set", { skip }, async (t) => {
  t.match(await gateway(t, 'warn'), /^warn: telegram: cannot reach the Bot API/m, 'at level warn the channel (in its chunk) warns');
  // A logger of the chunk's own would still be at its default level (info) and print the warnings.
  t.notMatch(await gateway(t, 'error'), /telegram:/, 'at level error it says nothing');
});
