// An adapter with every I2C and SMBus call pinclaw uses except the SMBus block calls (as most
// have), for tests of the I2C plans and tools.
import type { I2cFuncs } from '../../src/hardware/i2c/types.js';

export const ALL_I2C_FUNCS: I2cFuncs = {
  i2c: true,
  tenBitAddress: false,
  smbusPec: false,
  quick: true,
  readByte: true,
  writeByte: true,
  readByteData: true,
  writeByteData: true,
  readWordData: true,
  writeWordData: true,
  readBlockData: false,
  writeBlockData: false,
  readI2cBlockData: true,
  writeI2cBlockData: true,
  mask: null,
};
