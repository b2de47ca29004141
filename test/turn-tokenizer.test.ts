// A turn loads the tokenizer's table (8.5 MiB for o200k_base, loaded again after every idle release)
// only when a question needs a count: the compaction check and the prompt memories are answered by
// the UTF-8 bound when it is within their budget (src/agent/tokens.ts, TokenCounter.atMost), and the
// memories' line counts outlive the idle release. The real runtime, the real addon, a scripted model.
import t, { type Test } from 'tap';
import { defaults, type PinclawConfig } from '../src/config/schema.js';
import type { ChannelAdapter } from '../src/conductor/conductor.js';
import { loadAddon } from '../src/native/loader.js';
import type { TokenizerAddon } from '../src/native/tokenizer.js';
import { resolvePaths } from '../src/paths.js';
import { releaseCaches } from '../src/release.js';
import { createRuntime } from '../src/setup/runtime.js';
import { openDatabase } from '../src/store/db.js';
import { tempDir } from './support/proc.js';
import { reply, scriptedProvider } from './support/scripted-provider.js';

const addon = loadAddon<TokenizerAddon>('pinclaw');
const loaded = () => addon.tokenizerInfo().loaded.includes('o200k_base');

function fixture(t: Test, configure: (c: PinclawConfig) => void, replies: number) {
  const home = tempDir();
  const paths = resolvePaths({ home }, {});
  const db = openDatabase(paths.database);
  const config = defaults();
  config.conductor.maxAttempts = 1;
  configure(config);
  const cli: ChannelAdapter = { name: 'cli', debounceMs: 0, send: async () => undefined };
  const provider = scriptedProvider(Array.from({ length: replies }, () => reply('noted')));
  const rt = createRuntime({ db, config, paths, env: {}, channels: [cli], provider });
  t.teardown(async () => {
    await rt.conductor.stop(2000);
    db.close();
  });
  rt.conductor.start();
  const ask = async (text: string) => (await rt.conductor.delivered(rt.conductor.submit({ sessionKey: 'cli:owner', channel: 'cli', chatId: 'owner', sender: 'owner', text }).id)).text;
  return { ask, rt };
}

t.test('turns after an idle release load no tokenizer table', async (t) => {
  const { ask, rt } = fixture(t, () => undefined, 3);
  const memory = await rt.memory.get();
  await memory.store('The greenhouse pump is on GPIO17 and runs at 7 in the morning.', { kind: 'fact' });
  t.equal(await ask('when does the greenhouse pump run?'), 'noted');
  releaseCaches();
  t.notOk(loaded(), 'released');
  t.equal(await ask('when does the greenhouse pump run?'), 'noted');
  t.equal(await ask('and the fan?'), 'noted');
  t.notOk(loaded(), 'two turns later the table is still not loaded');
});

t.test('a context whose bound passes the compaction threshold is counted', async (t) => {
  const { ask } = fixture(t, (c) => {
    // A threshold of 30,000 tokens: a message of 30,000 bytes (15,000 tokens) with the system prompt
    // passes it by the bound, not by the count, so the count decides and nothing is compacted.
    c.agent.contextWindow = 40_000;
    c.agent.compactAt = 0.75;
    c.memory.promptTokens = 0;
  }, 1);
  releaseCaches();
  t.notOk(loaded());
  t.equal(await ask('x '.repeat(15_000)), 'noted');
  t.ok(loaded(), 'the count was needed, and the table loaded');
});
