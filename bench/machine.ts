/** The machine a bench ran on, stored with the results: figures are only comparable on like machines. */
import { availableParallelism, cpus, loadavg, platform, release, totalmem } from 'node:os';

export interface MachineInfo {
  cores: number;
  cpu: string;
  memoryGb: number;
  node: string;
  platform: string;
  /** 1-minute load average when the run started: a busy machine slows every timing. */
  loadAverage: number;
  date: string;
}

export function machineInfo(): MachineInfo {
  return {
    cores: availableParallelism(),
    cpu: cpus()[0]?.model.trim() ?? 'unknown',
    memoryGb: Math.round((totalmem() / 1024 ** 3) * 10) / 10,
    node: process.version,
    platform: `${platform()} ${release()}`,
    loadAverage: Math.round((loadavg()[0] ?? 0) * 100) / 100,
    date: new Date().toISOString(),
  };
}
