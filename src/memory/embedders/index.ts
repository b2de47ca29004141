// The embedder the config names: the built-in local one, an OpenAI-compatible server, or none
// (keyword search only). Each is imported when first chosen, so an idle process loads none of them.
import type { PinclawConfig } from '../../config/schema.js';
import type { Db } from '../../store/db.js';
import type { Embedder } from '../types.js';

export async function createEmbedder(config: PinclawConfig['memory'], db: Db, env: NodeJS.ProcessEnv = process.env): Promise<Embedder | null> {
  if (config.embedder === 'none') return null;
  if (config.embedder === 'openai') {
    const [{ openaiEmbedder }, { sqliteEmbeddingCache }] = await Promise.all([import('./openai.js'), import('./cache.js')]);
    const o = config.openai;
    // OPENAI_API_KEY goes to OpenAI only, never to whatever server memory.openai.baseUrl names.
    const envKey = hostOf(o.baseUrl) === 'api.openai.com' ? env.OPENAI_API_KEY : undefined;
    return openaiEmbedder({
      baseUrl: o.baseUrl, model: o.model, apiKey: o.apiKey ?? envKey, dimensions: o.dimensions, batchSize: o.batchSize,
      cache: sqliteEmbeddingCache(db),
    });
  }
  const { localEmbedder } = await import('./local.js');
  return localEmbedder();
}

function hostOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return '';
  }
}
