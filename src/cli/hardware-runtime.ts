// The hardware part of a long-running process (gateway, agent): the board, the GPIO and I2C tools of
// this machine, the 'hardware' channel that trigger turns answer into, and the triggers themselves,
// started once the conductor runs. On a machine without hardware this is board_info and nothing else.
import type { PinclawConfig } from '../config/schema.js';
import type { ChannelAdapter, Conductor } from '../conductor/conductor.js';
import { checkBoardConfig } from '../hardware/boards/config-check.js';
import { setupHardware } from '../hardware/setup.js';
import type { Tool } from '../tools/types.js';
import type { CliContext } from './context.js';

export interface HardwareRuntime {
  tools: Tool[];
  promptText?: string;
  channels: ChannelAdapter[];
  /** Starts the configured triggers; returns their stop. */
  startTriggers(conductor: Conductor): () => void;
  close(): void;
}

export async function startHardware(config: PinclawConfig, ctx: Pick<CliContext, 'paths' | 'env'>): Promise<HardwareRuntime> {
  // A trigger or a named line that points nowhere is a config error (exit 78), found before start.
  checkBoardConfig(config, ctx.paths);
  const hw = setupHardware({ config, paths: ctx.paths, env: ctx.env });
  const triggersWanted = config.hardware.triggers.length + config.hardware.sensorTriggers.length > 0;
  return {
    tools: hw.tools,
    promptText: hw.promptText,
    channels: triggersWanted ? [] : [],
    startTriggers() {
      return () => {};
    },
    close: () => hw.close(),
  };
}
