// `pinclaw __i2c-selftest BUS ADDRESS` (hidden): runs the I2C self-test (src/hardware/i2c/selftest.ts:
// the addon and i2c-bus, each value written by one and read back by both) against i2c-stub and prints
// its report as one line of JSON; exit 0 when every check held, 1 otherwise. It is run by
// test/i2c-vm.test.ts inside the x64 VM, from the single executable, so it exercises the addons as
// the executable extracts them.
//
// `pinclaw __i2c-selftest tools JSON` (hidden): runs a JSON array of {"name", "input"} calls of the
// I2C tools (src/hardware/i2c/tools.ts) in one process, each input checked against the tool's schema
// as the registry checks it, and prints one JSON line per call ({tool, input, isError, content,
// physical}); exit 0 when every call ran (an error result is a result). This is how the VM test
// reaches the tools on a real kernel without a config or database: the registry's policy and audit
// have their own tests.
import { errorMessage, UsageError } from '../errors.js';
import { listBuses } from '../hardware/i2c/buses.js';
import { i2cBackend } from '../hardware/i2c/index.js';
import { i2cSelfTest, type I2cSelfTestReport } from '../hardware/i2c/selftest.js';
import { i2cTools } from '../hardware/i2c/tools.js';
import type { I2cBackend } from '../hardware/i2c/types.js';
import { configureNative } from '../native/loader.js';
import { validateInput } from '../tools/validate.js';
import { parseCommandArgs } from './args.js';
import type { CliContext } from './context.js';

const USAGE = 'pinclaw __i2c-selftest BUS ADDRESS | tools JSON';

/** A bus number or address as the shell gives it: decimal or 0x-prefixed hex (i2c-tools' habit). */
function integerArg(text: string, what: string): number {
  const n = /^(0x[0-9a-f]+|\d+)$/i.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(n)) throw new UsageError(`${what} must be a decimal or 0x-prefixed integer, got '${text}'\nusage: ${USAGE}`);
  return n;
}

interface Call {
  name: string;
  input: unknown;
}

function parseCalls(text: string): Call[] {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`tools: the calls are not JSON (${errorMessage(err)})\nusage: ${USAGE}`);
  }
  if (!Array.isArray(v)) throw new UsageError(`tools: expected a JSON array of {"name", "input"} calls\nusage: ${USAGE}`);
  return v.map((c: unknown, i) => {
    const name = (c as { name?: unknown } | null)?.name;
    if (typeof name !== 'string') throw new UsageError(`tools: call ${i} has no "name"`);
    return { name, input: (c as { input?: unknown }).input ?? {} };
  });
}

async function runTools(text: string, ctx: CliContext): Promise<number> {
  const calls = parseCalls(text);
  // Listed once: the command lives for a handful of calls, and no bus comes or goes meanwhile.
  const buses = await listBuses();
  let backend: I2cBackend | undefined;
  const tools = i2cTools({ backend: () => (backend ??= i2cBackend({ env: ctx.env })), buses: () => buses });
  for (const call of calls) {
    const tool = tools.find((t) => t.name === call.name);
    if (!tool) {
      ctx.err(`__i2c-selftest tools: unknown tool '${call.name}'; these are ${tools.map((t) => t.name).join(', ')}`);
      return 1;
    }
    const problems = validateInput(tool.inputSchema, call.input);
    const result = problems.length
      ? { content: `invalid arguments for ${tool.name}: ${problems.join('; ')}`, isError: true }
      : await tool.execute(call.input, { sessionKey: 'cli:i2c-selftest', channel: 'cli', chatId: 'local', caller: 'owner' });
    ctx.out(JSON.stringify({ tool: tool.name, input: call.input, isError: result.isError ?? false, content: result.content, physical: result.physical ?? null }));
  }
  return 0;
}

export async function runI2cSelfTest(args: string[], ctx: CliContext): Promise<number> {
  const { positionals } = parseCommandArgs(args, {}, USAGE);
  // Extracted addons go under $PINCLAW_HOME/cache, as for every other command; no config is read,
  // so a test guest needs nothing but the executable.
  configureNative({ cacheDir: ctx.paths.cache });
  if (positionals[0] === 'tools') {
    if (positionals.length !== 2) throw new UsageError(`usage: ${USAGE}`);
    return runTools(positionals[1]!, ctx);
  }
  if (positionals.length !== 2) throw new UsageError(`usage: ${USAGE}`);
  const bus = integerArg(positionals[0]!, 'BUS');
  const address = integerArg(positionals[1]!, 'ADDRESS');
  let report: I2cSelfTestReport;
  try {
    report = await i2cSelfTest(bus, address);
  } catch (err) {
    // The self-test refuses any adapter but i2c-stub (it writes registers): a reason, not a crash.
    ctx.err(`__i2c-selftest: ${errorMessage(err)}`);
    return 1;
  }
  // One line: the VM script captures it with $(cat ...) and the checker reads it as one field.
  ctx.out(JSON.stringify(report));
  return report.ok ? 0 : 1;
}
