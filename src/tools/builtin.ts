// The built-in tools, one module each. A new tool module exports a Tool (or a factory taking what it
// needs from BuiltinDeps) and is added to the list below; policy profiles name it in policy.ts.
import type { PinclawConfig } from '../config/schema.js';
import type { Paths } from '../paths.js';
import { execTool } from './exec.js';
import { fileTools, type LockedFile } from './files/index.js';
import { sendMessageTool } from './send-message.js';
import { spawnTool, type SubAgentRunner } from './spawn.js';
import { currentTimeTool } from './time.js';
import type { Tool } from './types.js';
import { webFetchTool } from './web/fetch.js';
import { webSearchTools } from './web/search.js';

export interface BuiltinDeps {
  config: PinclawConfig;
  paths: Paths;
  env: NodeJS.ProcessEnv;
  // What spawn runs a sub-agent with: a process that runs a model. Absent where none runs (`pinclaw
  // tool`); spawn then answers that it cannot work there. The conductor's send and the registry
  // itself are not given here: both are built from these tools, so they are lent through each
  // call's ToolContext (as confirm is), and every part is built after the ones it needs.
  subAgents?: SubAgentRunner;
}

/**
 * The home's files a gateway (or pinclaw agent) holds POSIX locks on through SQLite: reachable by the
 * file tools when a root holds the home, and opening one would drop the lock (confine.ts, LockedFile).
 */
export function lockedFiles(p: Paths): LockedFile[] {
  const db = "the database pinclaw is using, whose SQLite locks keep it consistent";
  return [
    { path: p.lock, what: "the gateway's lock on its home (one gateway per home)" },
    { path: p.database, what: db },
    { path: `${p.database}-wal`, what: `part of ${db}` },
    { path: `${p.database}-shm`, what: `part of ${db}` },
  ];
}

export function builtinTools(d: BuiltinDeps): Tool[] {
  return [
    currentTimeTool({ timezone: d.config.agent.timezone }),
    webFetchTool(d.config.web),
    // absent unless web.search.provider is set, so the model is never offered a search it cannot run
    ...webSearchTools(d.config.web),
    execTool({ workspace: d.paths.workspace, sandbox: d.config.sandbox, workspaceQuotaMb: d.config.files.workspaceQuotaMb }),
    ...fileTools({ workspace: d.paths.workspace, settings: d.config.files, locked: lockedFiles(d.paths) }),
    sendMessageTool({ maxChars: d.config.agent.maxMessageChars }),
    spawnTool({ settings: d.config.tools.spawn, runner: d.subAgents }),
  ];
}
