// The addon's one error style (native/js_error.h, docs/native-errors.md): every exported function,
// called with a bad argument, throws (or rejects with) the class that goes with its mistake, a
// message naming the function and the argument, and err.code from the documented set. A function
// added to the addon without a case here fails the first test.
import t from 'tap';
import { loadAddon } from '../src/native/loader.js';
import { createRankingIndex } from '../src/native/ranking.js';
import { checkAddress } from '../src/hardware/i2c/validate.js';

type Loose = (...args: unknown[]) => unknown;
const addon = loadAddon<Record<string, Loose>>('pinclaw');

interface Expect {
  name: 'TypeError' | 'RangeError' | 'Error';
  code: string;
  message: RegExp;
}
const type = (message: RegExp): Expect => ({ name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE', message });
const value = (message: RegExp): Expect => ({ name: 'TypeError', code: 'ERR_INVALID_ARG_VALUE', message });
const range = (message: RegExp): Expect => ({ name: 'RangeError', code: 'ERR_OUT_OF_RANGE', message });
const failure = (code: string, message: RegExp): Expect => ({ name: 'Error', code, message });

// Functions that take no argument: nothing to get wrong.
const noArguments = new Set(['info', 'trimMemory', 'reduceHeap', 'tokenizerInfo', 'landlockAbi']);

const ix = (): Record<string, Loose> => new (addon.RankingIndex as unknown as new (o: object) => Record<string, Loose>)({});

const cases: Record<string, [string, () => unknown, Expect][]> = {
  notify: [
    ['socketPath not a string', () => addon.notify!(1, 'READY=1'), type(/^notify\(socketPath: string, state: string\): socketPath must be a string, got 1$/)],
    ['state missing', () => addon.notify!('/run/x'), type(/^notify\(.*\): state must be a string, got undefined$/)],
    ['path too long', () => addon.notify!('/' + 'x'.repeat(200), 'READY=1'), range(/^notify\(.*\): socketPath must be at most 107 bytes \(socket path too long\), got 201$/)],
    ['no such socket', () => addon.notify!('/nonexistent/dir/sock', 'READY=1'), failure('ENOENT', /^notify: sendto \/nonexistent\/dir\/sock: No such file or directory$/)],
  ],
  limitMallocArenas: [
    ['zero', () => addon.limitMallocArenas!(0), range(/^limitMallocArenas\(count: number >= 1\): count must be an integer, 1 or more, got 0$/)],
    ['a string', () => addon.limitMallocArenas!('1'), type(/^limitMallocArenas\(.*\): count must be a number, got a string$/)],
  ],
  fixMallocThresholds: [
    ['too small', () => addon.fixMallocThresholds!(100), range(/^fixMallocThresholds\(.*\): bytes must be from 4096 to 33554432, got 100$/)],
    ['missing', () => addon.fixMallocThresholds!(), type(/^fixMallocThresholds\(.*\): bytes must be a number, got undefined$/)],
  ],
  hmacSha256: [
    ['key a Buffer', () => addon.hmacSha256!(Buffer.from('k'), 'x'), type(/^hmacSha256\(key: string, text: string\): key must be a string, got an object$/)],
    ['text a number', () => addon.hmacSha256!('k', 5), type(/^hmacSha256\(.*\): text must be a string, got 5$/)],
    ['text missing', () => addon.hmacSha256!('k'), type(/^hmacSha256\(.*\): text must be a string, got undefined$/)],
  ],
  trimFilePages: [['dryRun a string', () => addon.trimFilePages!('yes'), type(/^trimFilePages\(dryRun\?: boolean\): dryRun must be a boolean, got a string$/)]],
  openBeneath: [
    ['dirFd a string', () => addon.openBeneath!('x', 'a'), type(/^openBeneath\(.*\): dirFd must be a number, got a string$/)],
    ['dirFd negative', () => addon.openBeneath!(-1, 'a'), range(/^openBeneath\(.*\): dirFd must be a file descriptor \(an integer, 0 or more\), got -1$/)],
    ['path a number', () => addon.openBeneath!(0, 1), type(/^openBeneath\(.*\): path must be a string, got 1$/)],
    ['byHand a string', () => addon.openBeneath!(0, 'a', 'yes'), type(/^openBeneath\(.*\): byHand must be a boolean, got a string$/)],
  ],
  tokenizerLoad: [
    ['ranks not a string', () => addon.tokenizerLoad!('o200k_base', 5), type(/^tokenizerLoad\(encoding: string, ranks: string\): ranks must be a string, got 5$/)],
    ['bad rank text', () => addon.tokenizerLoad!('cl100k_base', '! x QQ=='), failure('ERR_PINCLAW_DATA', /^tokenizerLoad\(.*\): cl100k_base rank data: line 1: first rank is not a number$/)],
  ],
  tokenizerUnload: [['unknown encoding', () => addon.tokenizerUnload!('p50k_base'), value(/^tokenizerUnload\(encoding: string\): unknown encoding 'p50k_base'; known: o200k_base, cl100k_base$/)]],
  tokenCount: [
    ['encoding a number', () => addon.tokenCount!(1, 'x'), type(/^tokenCount\(encoding: string, text: string \| Uint8Array\): encoding must be a string, got 1$/)],
    ['unknown encoding', () => addon.tokenCount!('nope', 'x'), value(/^tokenCount\(.*\): unknown encoding 'nope'/)],
  ],
  tokenizerSplitPoints: [
    ['text a number', () => addon.tokenizerSplitPoints!(1, 2), type(/^tokenizerSplitPoints\(text: string \| Uint8Array, parts: number\): text must be a string or a Uint8Array, got 1$/)],
    ['parts a string', () => addon.tokenizerSplitPoints!('x', '2'), type(/^tokenizerSplitPoints\(.*\): parts must be a number, got a string$/)],
    ['parts zero', () => addon.tokenizerSplitPoints!('x', 0), range(/^tokenizerSplitPoints\(.*\): parts must be an integer from 1 to 4096, got 0$/)],
    ['parts not whole', () => addon.tokenizerSplitPoints!('x', 1.5), range(/^tokenizerSplitPoints\(.*\): parts must be an integer from 1 to 4096, got 1.5$/)],
  ],
  tokenEncode: [['encoding missing', () => addon.tokenEncode!(), type(/^tokenEncode\(.*\): encoding must be a string, got undefined$/)]],
  tokenCountAsync: [['unknown encoding', () => addon.tokenCountAsync!('gpt2', 'x'), value(/^tokenCountAsync\(.*\): unknown encoding 'gpt2'/)]],
  spawnSandboxed: [
    ['options null', () => addon.spawnSandboxed!(null, () => {}), type(/^spawnSandboxed\(options: object, onEvent: function\): options must be an object, got null$/)],
    ['onEvent not a function', () => addon.spawnSandboxed!({}, 1), type(/^spawnSandboxed\(.*\): onEvent must be a function, got 1$/)],
    ['options.file a number', () => addon.spawnSandboxed!({ file: 5 }, () => {}), type(/^spawnSandboxed: options\.file must be a string$/)],
  ],
  // The I2C messages are those of src/hardware/i2c/validate.ts word for word (the i2c-bus backend
  // throws them too), so they name the argument, not the binding.
  i2cFuncs: [['device missing', () => addon.i2cFuncs!(), type(/^i2cFuncs\(device: number \| string\)$/)]],
  i2cSmbus: [['address too high', () => addon.i2cSmbus!(1, 0x100, 'quick', 0), range(/^I2C address must be an integer from 0x03 to 0x77 .*, got 0x100$/)]],
  i2cTransfer: [['no messages', () => addon.i2cTransfer!(1, 0x40, []), range(/^an I2C transfer holds 1 to 42 messages \(I2C_RDWR_IOCTL_MAX_MSGS\), got 0$/)]],
  gpioChipInfo: [
    ['path a number', () => addon.gpioChipInfo!(5), type(/^gpioChipInfo: path must be a string, got 5$/)],
    ['no such chip', () => addon.gpioChipInfo!('/dev/gpiochip-none'), failure('ENOENT', /^gpioChipInfo: open on \/dev\/gpiochip-none: No such file or directory$/)],
  ],
  gpioLineInfo: [['offset negative', () => addon.gpioLineInfo!('/dev/null', -1), range(/^gpioLineInfo: offset must be an integer from 0 to 2\^32-1, got -1$/)]],
  gpioRequest: [
    ['unknown direction', () => addon.gpioRequest!('/dev/null', [1], { direction: 'sideways' }, 'x'), value(/^gpioRequest: config\.direction must be one of as-is, input, output$/)],
    ['no offsets', () => addon.gpioRequest!('/dev/null', [], {}, 'x'), range(/^gpioRequest: offsets must hold 1 to 32 line offsets, got 0$/)],
    ['offset a string', () => addon.gpioRequest!('/dev/null', ['1'], {}, 'x'), type(/^gpioRequest: offsets\[0\] must be a line offset .*, got a string$/)],
  ],
  gpioGetValues: [['foreign fd', () => addon.gpioGetValues!(123456, 1), failure('EBADF', /^gpioGetValues: fd 123456 is not a GPIO line request of this process/)]],
  gpioSetValues: [['fd a string', () => addon.gpioSetValues!('x', 1, 1), type(/^gpioSetValues: fd must be a number, got a string$/)]],
  gpioSetConfig: [['foreign fd', () => addon.gpioSetConfig!(123456, {}), failure('EBADF', /^gpioSetConfig: fd 123456 /)]],
  gpioWatch: [['foreign fd', () => addon.gpioWatch!(123456, () => {}), failure('EBADF', /^gpioWatch: fd 123456 /)]],
  gpioRelease: [['fd not whole', () => addon.gpioRelease!(1.5), range(/^gpioRelease: fd must be an integer from 0 to 2\^32-1, got 1\.5$/)]],
  embedderLoad: [
    ['data a string', () => addon.embedderLoad!('x'), type(/^embedderLoad\(data: Uint8Array \| ArrayBuffer\): data must be a Uint8Array or an ArrayBuffer, got a string$/)],
    ['data too short', () => addon.embedderLoad!(new Uint8Array(10)), failure('ERR_PINCLAW_DATA', /^embedderLoad: embedder data: too short for the header$/)],
  ],
  embedderInfo: [['a foreign object', () => addon.embedderInfo!({}), value(/^embedderInfo\(model\): model must be what embedderLoad returned, got an object$/)]],
  embedTexts: [['model null', () => addon.embedTexts!(null, ['x']), value(/^embedTexts\(model, texts: string\[\]\): model must be what embedderLoad returned, got null$/)]],
  embedTextsAsync: [['model null', () => addon.embedTextsAsync!(null, ['x']), value(/^embedTextsAsync\(.*\): model must be what embedderLoad returned, got null$/)]],
  RankingIndex: [
    ['b out of range', () => new (addon.RankingIndex as unknown as new (o: object) => unknown)({ b: 2 }), range(/^ranking: b must be a number from 0 to 1$/)],
    ['put: mode', () => ix().put!(5), range(/^ranking: put\(mode, documents\): mode must be 0, 1 or 2$/)],
    ['remove: id a number', () => ix().remove!(5), type(/^ranking: document id must be a string$/)],
    ['has: id a number', () => ix().has!(5), type(/^ranking: document id must be a string$/)],
    ['search: query a number', () => ix().search!(5), type(/^ranking: query must be an object$/)],
    ['load: not an index', () => ix().load!(new Uint8Array(10)), failure('ERR_PINCLAW_DATA', /^ranking: cannot load: not a serialized ranking index$/)],
  ],
  rankingTerms: [['text a number', () => addon.rankingTerms!(5), type(/^ranking: rankingTerms\(text: string \| Uint8Array\)$/)]],
};

t.test('every exported function has a bad-argument case (or takes no argument)', async (t) => {
  const exported = Object.keys(addon).sort();
  const covered = exported.filter((k) => k in cases || noArguments.has(k));
  t.same(covered, exported, 'no exported function is left without a case');
  t.same(Object.keys(cases).filter((k) => !exported.includes(k)), [], 'every case names an exported function');
});

t.test('a bad argument: the class, message and code from the one style', async (t) => {
  for (const [fn, list] of Object.entries(cases)) {
    for (const [label, call, want] of list) {
      // Asynchronous functions check their arguments synchronously too: nothing is queued.
      t.throws(call, { name: want.name, code: want.code, message: want.message }, `${fn}: ${label}`);
    }
  }
});

t.test('system failures carry the errno as well as its name', async (t) => {
  t.throws(() => addon.notify!('/nonexistent/dir/sock', 'READY=1'), { code: 'ENOENT', errno: 2 });
  t.throws(() => addon.gpioGetValues!(123456, 1), { code: 'EBADF', errno: 9 });
});

t.test('a rejected promise uses the same style: encoding not loaded is a state error', async (t) => {
  // tokenCountAsync checks on the calling thread, so an unloaded encoding throws before any promise.
  addon.tokenizerUnload!('cl100k_base');
  t.throws(() => addon.tokenCountAsync!('cl100k_base', 'x'), { name: 'Error', code: 'ERR_PINCLAW_STATE', message: /^tokenCountAsync\(.*\): encoding cl100k_base is not loaded; call tokenizerLoad first$/ });
});

t.test('the TypeScript references throw the same class and code for the same mistake', async (t) => {
  for (const backend of ['native', 'reference'] as const) {
    t.throws(() => createRankingIndex({ b: 2 }, backend), { name: 'RangeError', code: 'ERR_OUT_OF_RANGE', message: 'ranking: b must be a number from 0 to 1' }, backend);
    t.throws(() => createRankingIndex('x' as unknown as object, backend), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE', message: 'ranking: options must be an object' }, backend);
  }
  let viaAddon: unknown;
  try {
    addon.i2cSmbus!(1, 0x100, 'quick', 0);
  } catch (err) {
    viaAddon = err;
  }
  t.throws(() => checkAddress(0x100), { name: (viaAddon as Error).name, code: (viaAddon as { code: string }).code, message: (viaAddon as Error).message }, 'i2c: validate.ts and the addon agree');
});
