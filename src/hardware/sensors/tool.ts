// sensor_read {name}: one named sensor of hardware.sensors, as a value with its unit. Read-only: it
// reads a register or an ADC pin and changes nothing, so it belongs with board_info in the minimal
// profile.
import { defineTool } from '../../tools/define.js';
import type { Tool } from '../../tools/types.js';
import { errorMessage } from '../../errors.js';
import type { SensorReader } from './reader.js';

export function sensorReadTool(reader: SensorReader): Tool {
  const names = reader.names();
  return defineTool({
    name: 'sensor_read',
    readOnly: true,
    description: `Read a named sensor (hardware.sensors) and get its value with its unit. Sensors: ${names.join(', ') || 'none'}.`,
    inputSchema: {
      type: 'object',
      properties: { name: { type: 'string', minLength: 1, maxLength: 64, description: 'the sensor\'s name' } },
      required: ['name'],
      additionalProperties: false,
    },
    // One bus or serial link at a time, in the model's order, like the other hardware tools.
    sequential: true,
    async execute(input) {
      const { name } = input;
      try {
        const r = await reader.read(name);
        return { content: `${r.name}: ${r.value}${r.unit ? ` ${r.unit}` : ''} (raw ${r.raw}, ${r.source})` };
      } catch (err) {
        return { content: errorMessage(err), isError: true };
      }
    },
  });
}
