// defineTool: a tool whose handler's input type is inferred from its JSON schema literal, so the
// schema and the code that reads the input cannot drift apart unseen (the manner of
// src/config/schema.ts, which infers the config type from its schema). Types only: the runtime
// check stays validateInput (validate.ts), which the registry, the loop and spawn run before
// execute and targetChat; what it accepts is what InputOf<S> describes.
import type { Tool, ToolContext, ToolResult } from './types.js';
import type { JsonSchema } from './validate.js';

/** A tool's input schema: always an object. */
export type ObjectSchema = JsonSchema & { type: 'object' };

type Simplify<T> = { [K in keyof T]: T[K] } & {};
type Elem<A> = A extends readonly (infer E)[] ? E : never;

/** The value a schema accepts; a schema known only at runtime (an MCP server's) gives unknown fields. */
export type InferSchema<S> = S extends { enum: readonly unknown[] } ? (string extends Elem<S['enum']> ? InferType<S> : number extends Elem<S['enum']> ? InferType<S> : Elem<S['enum']>)
  : InferType<S>;
type InferType<S> = S extends { type: 'string' } ? string
  : S extends { type: 'integer' | 'number' } ? number
  : S extends { type: 'boolean' } ? boolean
  : S extends { type: 'null' } ? null
  : S extends { type: 'array'; items: infer I } ? InferSchema<I>[]
  : S extends { type: 'array' } ? unknown[]
  : S extends { type: 'object' } ? InferObject<S>
  : unknown;
type RequiredOf<S> = S extends { required: readonly (infer R)[] } ? R : never;
type InferObject<S> = S extends { properties: infer P }
  ? string extends keyof P ? Record<string, unknown>
    : Simplify<
      { -readonly [K in keyof P as K extends RequiredOf<S> ? K : never]: InferSchema<P[K]> } & {
        -readonly [K in keyof P as K extends RequiredOf<S> ? never : K]?: InferSchema<P[K]>;
      }
    >
  : Record<string, unknown>;

/** The input execute receives: what validateInput accepts for the schema S. */
export type InputOf<S extends ObjectSchema> = InferSchema<S>;

export type ToolDefinition<S extends ObjectSchema> = Omit<Tool, 'inputSchema' | 'execute' | 'targetChat'> & {
  inputSchema: S;
  /** Runs after validateInput accepted the input against inputSchema. */
  execute: (input: InputOf<S>, ctx: ToolContext) => Promise<ToolResult>;
  /** Read by policy after validation (registry.ts), like execute. */
  targetChat?: (input: InputOf<S>) => { channel: string; chatId: string } | undefined;
};

/**
 * A tool from its definition. The one place where "validated against S" becomes "of type
 * InputOf<S>": every caller of execute validates first (registry.ts, agent/loop.ts, spawn.ts).
 */
export function defineTool<const S extends ObjectSchema>(def: ToolDefinition<S>): Tool {
  const { execute, targetChat, ...rest } = def;
  const typed = (v: unknown): InputOf<S> => v as InputOf<S>;
  return {
    ...rest,
    execute: (v, ctx) => execute(typed(v), ctx),
    ...(targetChat ? { targetChat: (v: unknown) => targetChat(typed(v)) } : {}),
  };
}
