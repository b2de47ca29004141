// The zero-latency provider of the turn benchmark, in its own process so its work does not count as
// the orchestrator's: one tool call, then a final answer, for every turn.
import { startAnthropicServer, textReply, toolUseReply } from '../../test/support/anthropic-server.js';

const srv = await startAnthropicServer((req) => {
  const last = req.body.messages.at(-1);
  const afterTool = Array.isArray(last?.content) && last.content.some((b: { type: string }) => b.type === 'tool_result');
  return afterTool ? textReply('done', 500) : toolUseReply([{ name: 'echo', input: { text: 'ping' } }]);
});
process.stdout.write(`${srv.url}\n`);
process.on('SIGTERM', () => void srv.close().then(() => process.exit(0)));
