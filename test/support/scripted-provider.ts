// A Provider behind the interface for unit tests of the loop and the conductor: it answers from a
// script and records what it was asked. Integration tests use the real SDK against the stand-in
// servers instead (test/agent-*.test.ts).
import type { ContentBlock, Provider, ProviderRequest, ProviderResponse, StopReason } from '../../src/agent/types.js';

export type Step = ProviderResponse | ((req: ProviderRequest) => ProviderResponse | Promise<ProviderResponse>);

export function reply(content: ContentBlock[] | string, stopReason?: StopReason, inputTokens = 100): ProviderResponse {
  const blocks: ContentBlock[] = typeof content === 'string' ? [{ type: 'text', text: content }] : content;
  return { content: blocks, stopReason: stopReason ?? (blocks.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn'), usage: { inputTokens, outputTokens: 10 }, model: 'scripted' };
}

export function scriptedProvider(steps: Step[], fallback?: Step): Provider & { requests: ProviderRequest[] } {
  const requests: ProviderRequest[] = [];
  return {
    id: 'scripted/test',
    requests,
    async complete(req) {
      requests.push(structuredClone({ ...req, signal: undefined }));
      const step = steps.shift() ?? fallback;
      if (!step) throw new Error('scripted provider: no step left');
      return typeof step === 'function' ? step(req) : step;
    },
  };
}
