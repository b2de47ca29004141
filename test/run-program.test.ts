// The program runner the images and voice chunks share (src/run-program.ts), with real programs:
// stdout bounds (fail for an image, drop for a transcript), the part of stderr kept, stdin, and
// each failure as data (missing, exit, timeout, abort).
import t from 'tap';
import { ProgramRunError, runProgram } from '../src/run-program.js';

const node = process.execPath;
const base = { timeoutMs: 30_000, maxStdout: 1024, overflow: 'fail' as const, stderrFrom: 'start' as const };
const failureOf = async (p: Promise<unknown>) => {
  try {
    await p;
  } catch (err) {
    if (err instanceof ProgramRunError) return { failure: err.failure, stderr: err.stderr };
    throw err;
  }
  throw new Error('the program did not fail');
};

t.test('stdout and stdin', async (t) => {
  const r = await runProgram({ ...base, command: node, args: ['-e', 'process.stdin.pipe(process.stdout)'], stdin: 'hello' });
  t.equal(r.stdout.toString(), 'hello');
  const none = await runProgram({ ...base, command: node, args: ['-e', 'process.stdin.on("data", () => process.exit(3)); process.stdin.on("end", () => process.exit(0))'] });
  t.equal(none.stdout.length, 0, 'without stdin the program reads an empty one');
});

t.test('past maxStdout: fail, or keep exactly the first bytes', async (t) => {
  const args = ['-e', 'process.stdout.write("x".repeat(5000))'];
  t.same((await failureOf(runProgram({ ...base, command: node, args }))).failure, { kind: 'too-large' });
  const kept = await runProgram({ ...base, overflow: 'drop', command: node, args });
  t.equal(kept.stdout.toString(), 'x'.repeat(1024));
});

t.test('a failing program: the exit, and stderr from its start or its end', async (t) => {
  const args = ['-e', 'process.stderr.write("first cause\\n" + "y".repeat(20000) + "\\nlast words"); process.exit(4)'];
  const start = await failureOf(runProgram({ ...base, command: node, args }));
  t.same(start.failure, { kind: 'exit', code: 4, signal: null });
  t.match(start.stderr, /^first cause\n/);
  const end = await failureOf(runProgram({ ...base, stderrFrom: 'end', command: node, args }));
  t.match(end.stderr, /\nlast words$/);
  t.notMatch(end.stderr, /first cause/);
});

t.test('missing, timeout and abort', async (t) => {
  t.same((await failureOf(runProgram({ ...base, command: '/nonexistent/ffmpeg', args: [] }))).failure, { kind: 'missing' });
  const hang = ['-e', 'setInterval(() => {}, 1000)'];
  t.same((await failureOf(runProgram({ ...base, timeoutMs: 300, command: node, args: hang }))).failure, { kind: 'timeout' });
  const ac = new AbortController();
  const p = runProgram({ ...base, command: node, args: hang, signal: ac.signal });
  setTimeout(() => ac.abort(), 200);
  t.same((await failureOf(p)).failure, { kind: 'aborted' });
  t.same((await failureOf(runProgram({ ...base, command: node, args: hang, signal: AbortSignal.abort() }))).failure, { kind: 'aborted' }, 'an aborted signal: never started');
});
