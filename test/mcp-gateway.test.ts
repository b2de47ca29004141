// The MCP client in a real gateway (the bundle, the lazy chunk): a server's state in /metrics and
// /api/status, its tools called through `pinclaw mcp call`, and every process of it gone when the
// gateway stops.
import t from 'tap';
import { existsSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bundle, cleanEnv, runPinclawAsync, start, tempDir } from './support/proc.js';

const faulty = join(import.meta.dirname, 'support', 'mcp-faulty-server.ts');

function processesWith(marker: string): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (readFileSync(`/proc/${d}/cmdline`, 'utf8').includes(marker)) out.push(Number(d));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

t.test('a gateway with one stdio server: /metrics, /api/status, and no process left after SIGTERM', async (t) => {
  const home = tempDir();
  const marker = `1000.${process.pid}${Date.now() % 100000}`;
  writeFileSync(join(home, 'config.json'), JSON.stringify({
    gateway: { token: 'mcp-test-token-123' },
    mcp: { servers: { f: { command: process.execPath, args: [faulty, 'grandchild'], env: { FAULTY_SLEEP: marker }, sandbox: false } } },
  }));
  const gw = start(process.execPath, [bundle, 'gateway', '--port', '0'], { env: cleanEnv({ PINCLAW_HOME: home }) });
  const url = (await gw.waitFor(/gateway listening on (http:\/\/[^\s]+)/))[1]!;
  await gw.waitFor(/MCP server f: up/);
  const auth = { authorization: 'Bearer mcp-test-token-123' };
  const metrics = await (await fetch(`${url}/metrics`, { headers: auth })).text();
  t.match(metrics, /^pinclaw_mcp_server_up\{server="f",state="up"\} 1$/m);
  t.match(metrics, /^pinclaw_mcp_server_tools\{server="f"\} 5$/m);
  const status = (await (await fetch(`${url}/api/status`, { headers: auth })).json()) as { mcp: { name: string; state: string; protocolVersion: string }[] };
  t.match(status.mcp, [{ name: 'f', state: 'up', protocolVersion: '2025-11-25' }]);
  t.equal(processesWith(marker).length, 1, "the server's child runs");
  gw.child.kill('SIGTERM');
  t.equal((await gw.exited).code, 0);
  t.same(processesWith(marker), [], 'the server and its child (which ignores SIGTERM) are gone when the gateway has stopped');
  t.same(readdirSync(join(home, 'run', 'mcp')), [], 'and so is the record of it (nothing for a next start to sweep)');
});

t.test('pinclaw mcp list | tools | call', async (t) => {
  const home = tempDir();
  writeFileSync(join(home, 'config.json'), JSON.stringify({ mcp: { servers: { f: { command: process.execPath, args: [faulty, 'ok'], sandbox: false, tools: ['echo', 'sleep', 'die', 'big'] }, off: { command: 'nothing', enabled: false } } } }));
  const env = cleanEnv({ PINCLAW_HOME: home });
  const list = await runPinclawAsync(['mcp', 'list'], { env });
  t.equal(list.code, 0, list.stderr);
  t.match(list.stdout, /^f \(stdio\): up, 4 tools, faulty-ok 1\.0\.0, protocol 2025-11-25/m);
  t.match(list.stdout, /^off \(stdio\): disabled$/m);
  const tools = await runPinclawAsync(['mcp', 'tools', 'f'], { env });
  t.match(tools.stdout, /^f__echo$/m);
  t.match(tools.stdout, /^add-tool \(not offered: mcp\.servers\.f\.tools\)$/m, 'a tool outside the allow-list is shown, not offered');
  const call = await runPinclawAsync(['mcp', 'call', 'f', 'echo', '{"message":"from the cli"}'], { env });
  t.equal(call.code, 0, call.stderr);
  t.match(call.stdout, /echo: from the cli/);
  const audit = await runPinclawAsync(['audit', '--tool', 'f__echo', '--json'], { env });
  t.match(audit.stdout, /f__echo/, 'the call is an audit row');
  const doctor = await runPinclawAsync(['doctor', '--json'], { env });
  const mcpCheck = (JSON.parse(doctor.stdout) as { checks: { name: string; state: string; detail: string }[] }).checks.find((c) => c.name === 'mcp');
  t.match(mcpCheck, { state: 'ok', detail: /^f: up, 4 tools \(faulty-ok 1\.0\.0, protocol 2025-11-25, none \(mcp\.servers\.f\.sandbox is false\)\); off: disabled$/ }, 'doctor shows each server');
  const nope = await runPinclawAsync(['mcp', 'tools', 'nope'], { env });
  t.equal(nope.code, 2);
  t.match(nope.stderr, /no MCP server 'nope' in mcp.servers \(configured: f, off/);
});

t.test('pinclaw mcp resources | read | prompts | prompt against server-everything, and call\'s progress on stderr', async (t) => {
  const home = tempDir();
  const everything = realpathSync(join(import.meta.dirname, '..', 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js'));
  writeFileSync(join(home, 'config.json'), JSON.stringify({ mcp: { servers: { every: { command: process.execPath, args: [everything, 'stdio'], sandbox: false }, f: { command: process.execPath, args: [faulty, 'ok'], sandbox: false } } } }));
  const env = cleanEnv({ PINCLAW_HOME: home });
  const list = await runPinclawAsync(['mcp', 'list'], { env });
  t.match(list.stdout, /^every \(stdio\): up, \d+ tools, 7 resources, 4 prompts, mcp-servers\/everything 2\.0\.0/m, 'list counts resources and prompts');
  const resources = await runPinclawAsync(['mcp', 'resources', 'every'], { env });
  t.equal(resources.code, 0, resources.stderr);
  t.match(resources.stdout, /^demo:\/\/resource\/static\/document\/features\.md\n {2}features\.md \(text\/markdown\): Static document file exposed from \/docs: features\.md$/m);
  t.match(resources.stdout, /^demo:\/\/resource\/dynamic\/blob\/\{resourceId\} \(template\)$/m);
  const text = await runPinclawAsync(['mcp', 'read', 'every', 'demo://resource/dynamic/text/4'], { env });
  t.equal(text.code, 0, text.stderr);
  t.match(text.stdout, /^\[resource demo:\/\/resource\/dynamic\/text\/4, text\/plain\]\nResource 4: This is a plaintext resource/);
  const blob = await runPinclawAsync(['mcp', 'read', 'every', 'demo://resource/dynamic/blob/5', '--json'], { env });
  const [contents] = JSON.parse(blob.stdout) as { uri: string; blob: string }[];
  t.match(Buffer.from(contents!.blob, 'base64').toString(), /^Resource 5: This is a base64 blob/, '--json gives the blob as the server sent it');
  const prompts = await runPinclawAsync(['mcp', 'prompts', 'every'], { env });
  t.match(prompts.stdout, /^args-prompt city \[state\]\n {2}A prompt with two arguments, one required and one optional$/m);
  const prompt = await runPinclawAsync(['mcp', 'prompt', 'every', 'args-prompt', '{"city":"Bergen"}'], { env });
  t.equal(prompt.code, 0, prompt.stderr);
  t.match(prompt.stdout, /^user: What's weather in Bergen\?$/m);
  const badArgs = await runPinclawAsync(['mcp', 'prompt', 'every', 'args-prompt', '{"city":["a"]}'], { env });
  t.equal(badArgs.code, 2);
  t.match(badArgs.stderr, /prompt argument 'city' must be a string, not an array/);
  const call = await runPinclawAsync(['mcp', 'call', 'every', 'trigger-long-running-operation', '{"duration":1,"steps":2}'], { env });
  t.equal(call.code, 0, call.stderr);
  t.match(call.stderr, /^pinclaw: every__trigger-long-running-operation: progress 1\/2\npinclaw: every__trigger-long-running-operation: progress 2\/2$/m, 'progress on stderr');
  t.match(call.stdout, /Long running operation completed/);
  const none = await runPinclawAsync(['mcp', 'resources', 'f'], { env });
  t.equal(none.code, 1);
  t.match(none.stderr, /MCP server f offers no resources/);
  const noPrompts = await runPinclawAsync(['mcp', 'prompts', 'f'], { env });
  t.match(noPrompts.stderr, /MCP server f offers no prompts/);
});

const CHROMIUM = '/usr/bin/chromium';
t.test("in Chromium: the dashboard's health view shows each MCP server's state, and why one is down", { skip: existsSync(CHROMIUM) ? false : `${CHROMIUM} is not installed` }, async (t) => {
  const { chromium } = await import('playwright-core');
  const home = tempDir();
  const token = 'mcp-dash-token-1234';
  writeFileSync(join(home, 'config.json'), JSON.stringify({
    gateway: { token },
    memory: { embedder: 'none' },
    mcp: { servers: { f: { command: process.execPath, args: [faulty, 'ok'], sandbox: false }, broken: { command: process.execPath, args: [faulty, 'crash'], sandbox: false } } },
  }));
  const gw = start(process.execPath, [bundle, 'gateway', '--port', '0'], { env: cleanEnv({ PINCLAW_HOME: home }) });
  t.teardown(async () => {
    gw.child.kill('SIGTERM');
    await gw.exited;
  });
  const url = (await gw.waitFor(/gateway listening on (http:\/\/[^\s]+)/))[1]!;
  await gw.waitFor(/MCP server f: up/);
  await gw.waitFor(/MCP server broken exited/);
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  t.teardown(() => browser.close());
  const page = await (await browser.newContext()).newPage();
  await page.goto(url);
  await page.fill('#token', token);
  await page.click('#login-form button[type=submit]');
  await page.locator('#app').waitFor();
  await page.click('.tabs button[data-tab=health]');
  const row = page.locator('#health-facts dd', { hasText: 'f: up (5 tools)' });
  await row.waitFor();
  t.match(await row.textContent(), /broken: down \(MCP server broken exited \(code 3\).*cannot open \/nonexistent\/config\.yaml/);
});

t.test('a gateway killed with SIGKILL takes its servers with it: a sandboxed one with its child, an unconfined one itself', async (t) => {
  const home = tempDir();
  const sandboxed = `1000.${process.pid}${(Date.now() + 3) % 100000}`;
  const unconfined = `pdeathsig-${process.pid}-${Date.now()}`;
  const nodeModules = realpathSync(join(import.meta.dirname, '..', 'node_modules'));
  writeFileSync(join(home, 'config.json'), JSON.stringify({
    mcp: {
      servers: {
        // node_modules: tap's process tracking puts an --import of its own into every child's NODE_OPTIONS.
        boxed: { command: process.execPath, args: [faulty, 'grandchild'], env: { FAULTY_SLEEP: sandboxed }, paths: [realpathSync(import.meta.dirname), nodeModules] },
        open: { command: process.execPath, args: [faulty, 'stubborn', unconfined], sandbox: false },
      },
    },
  }));
  const gw = start(process.execPath, [bundle, 'gateway', '--port', '0'], { env: cleanEnv({ PINCLAW_HOME: home }) });
  await gw.waitFor(/MCP server boxed: up/);
  await gw.waitFor(/MCP server open: up/);
  t.equal(processesWith(sandboxed).length, 1);
  t.equal(processesWith(unconfined).length, 1);
  gw.child.kill('SIGKILL');
  await gw.exited;
  // The kernel delivers the parent-death signals as the gateway dies; give the reaping a moment.
  for (let i = 0; i < 100 && processesWith(sandboxed).length + processesWith(unconfined).length > 0; i++) await new Promise((r) => setTimeout(r, 50));
  t.same(processesWith(sandboxed), [], 'the sandboxed server and its child are gone');
  t.same(processesWith(unconfined), [], 'the unconfined server is gone');
});

t.test('what a SIGKILLed gateway leaves of its servers (the children of an unconfined one and of one under Landlock) is killed by the next start', async (t) => {
  const home = tempDir();
  const open = `1000.${process.pid}${(Date.now() + 5) % 100000}`;
  const boxed = `1000.${process.pid}${(Date.now() + 9) % 100000}`;
  const repo = realpathSync(join(import.meta.dirname, '..'));
  const config = (servers: object) => writeFileSync(join(home, 'config.json'), JSON.stringify({ sandbox: { backend: 'landlock' }, mcp: { servers } }));
  config({
    open: { command: process.execPath, args: [faulty, 'grandchild'], env: { FAULTY_SLEEP: open }, sandbox: false },
    // The repository: Node reads its package.json for the .ts server's module type.
    boxed: { command: process.execPath, args: [faulty, 'grandchild'], env: { FAULTY_SLEEP: boxed }, paths: [repo] },
  });
  const gw = start(process.execPath, [bundle, 'gateway', '--port', '0'], { env: cleanEnv({ PINCLAW_HOME: home }) });
  await gw.waitFor(/MCP server open: up/);
  await gw.waitFor(/MCP server boxed: up \(.*landlock/);
  t.equal(processesWith(open).length, 1);
  t.equal(processesWith(boxed).length, 1);
  gw.child.kill('SIGKILL');
  await gw.exited;
  // The leaders die of their parent-death signal; their children are what this is about.
  await new Promise((r) => setTimeout(r, 300));
  t.equal(processesWith(open).length + processesWith(boxed).length, 2, 'the servers\' children outlive a SIGKILLed gateway (reparented to init)');
  t.equal(readdirSync(join(home, 'run', 'mcp')).length, 2, 'each server is still recorded in the home');
  // The next start, even with no server configured any more, kills them before anything else runs.
  config({});
  const next = start(process.execPath, [bundle, 'gateway', '--port', '0'], { env: cleanEnv({ PINCLAW_HOME: home }) });
  t.teardown(async () => {
    next.child.kill('SIGTERM');
    await next.exited;
  });
  await next.waitFor(/MCP: killed 2 processes that servers (open, boxed|boxed, open) of a pinclaw that did not stop/);
  await next.waitFor(/gateway listening on/);
  for (let i = 0; i < 100 && processesWith(open).length + processesWith(boxed).length > 0; i++) await new Promise((r) => setTimeout(r, 50));
  t.same(processesWith(open), [], "the unconfined server's child is gone");
  t.same(processesWith(boxed), [], "the Landlock server's child is gone");
  t.same(readdirSync(join(home, 'run', 'mcp')), [], 'the records are gone');
});
