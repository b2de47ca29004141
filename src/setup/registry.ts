// The registry as a process runs it: built-in tools, the configured policy and limits, redaction of
// every secret the config holds, and audit rows in the store. The runtime and `pinclaw tool` share it,
// so a tool run by hand is judged and recorded exactly like one the model calls.
import { createRedactor, secretValues, type Redactor } from '../config/redact.js';
import type { Db } from '../store/db.js';
import { finishAudit, insertAudit, insertAuditSoon } from '../store/audit.js';
import { errorMessage } from '../errors.js';
import { log } from '../log.js';
import { builtinTools, type BuiltinDeps } from '../tools/builtin.js';
import { createPolicy, type PolicyOptions } from '../tools/policy.js';
import { createRegistry, type AuditSink, type Registry } from '../tools/registry.js';
import type { Tool, ToolSource } from '../tools/types.js';
import { memoryHolder, type MemoryHolder } from '../memory/holder.js';
import { memoryTools } from '../memory/tools.js';
import { cronTools } from '../scheduler/tools.js';
import { loadHooks, type Hooks } from '../hooks/index.js';

export function dbAudit(db: Db): AuditSink {
  return {
    record: (e) => insertAudit(db, e),
    finish: (id, f) => finishAudit(db, id, f),
    recordSoon: (e) => insertAuditSoon(db, e, (err) => log.warn(`audit: cannot record the call of ${e.tool} (${e.outcome}): ${errorMessage(err)}`)),
  };
}

export interface ConfiguredDeps extends BuiltinDeps {
  db: Db;
  /** replaces the built-in tools (tests) */
  tools?: readonly Tool[];
  /** added to the built-in tools: the hardware tools of this machine (src/hardware/setup.ts) */
  extraTools?: readonly Tool[];
  /** tools that come and go: the MCP servers' (src/mcp/client/) */
  toolSources?: readonly ToolSource[];
  /** whether exec runs in an OS sandbox here (src/sandbox/detect.ts execSandbox): the standard profile offers it only then */
  execSandbox?: PolicyOptions['execSandbox'];
}

/** The memory as its tools and the prompt use it (opened on first use). */
export function configuredMemory(d: ConfiguredDeps): MemoryHolder {
  return memoryHolder({ db: d.db, paths: d.paths, config: d.config, env: d.env });
}

/** Throws a ConfigError (exit 78) when tools.* holds what the schema cannot check. */
export function configuredRegistry(d: ConfiguredDeps & { memory?: MemoryHolder }): { registry: Registry; redact: Redactor; memory: MemoryHolder; hooks?: Hooks } {
  const redact = createRedactor(secretValues(d.config, d.env));
  const memory = d.memory ?? configuredMemory(d);
  const audit = dbAudit(d.db);
  // Hook decisions are audit rows beside the calls they judged.
  const hooks = loadHooks({ config: d.config, workspace: d.paths.workspace, audit, db: d.db, redact });
  const registry = createRegistry([...(d.tools ?? [...builtinTools(d), ...memoryTools(memory), ...cronTools({ db: d.db, config: d.config })]), ...(d.extraTools ?? [])], {
    policy: createPolicy(d.config.tools, { execSandbox: d.execSandbox }),
    audit,
    redact,
    limits: d.config.tools,
    ...(hooks ? { hooks } : {}),
    ...(d.toolSources ? { sources: d.toolSources } : {}),
  });
  return { registry, redact, memory, ...(hooks ? { hooks } : {}) };
}
