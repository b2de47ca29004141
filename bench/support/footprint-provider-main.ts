// The zero-latency provider of the footprint benchmark (bench/footprint.mjs), in its own process so
// that its memory and work are not the gateway's: every turn is one current_time tool call, then a
// final answer, so a turn runs the tool layer and its audit rows as well as two model calls.
import { startAnthropicServer, textReply, toolUseReply, type AnthropicStep, type Recorded, type StandIn } from '../../test/support/anthropic-server.js';

let srv: StandIn<AnthropicStep> | undefined;
srv = await startAnthropicServer((req: Recorded) => {
  // The stand-in records every request for tests to inspect; over 20,000 model calls that would be
  // hundreds of MB of prompts here, which nobody reads.
  if (srv) srv.requests.length = 0;
  const last = req.body.messages.at(-1);
  const afterTool = Array.isArray(last?.content) && last.content.some((b: { type: string }) => b.type === 'tool_result');
  return afterTool ? textReply('pong') : toolUseReply([{ name: 'current_time', input: {} }]);
});
process.stdout.write(`${srv.url}\n`);
process.on('SIGTERM', () => void srv?.close().then(() => process.exit(0)));
