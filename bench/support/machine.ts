/** What the numbers were measured on: printed with every bench run. */
import { readFileSync } from "node:fs";
import { availableParallelism, cpus, loadavg, platform, release, totalmem } from "node:os";

export interface Machine {
  cpu: string;
  cores: number;
  memoryGiB: number;
  os: string;
  node: string;
  /** 1-minute load average when the run started: above the core count, expect noise. */
  load1: number;
}

function cpuModel(): string {
  try {
    const m = /^model name\s*:\s*(.+)$/m.exec(readFileSync("/proc/cpuinfo", "utf8"));
    if (m?.[1]) return m[1].trim();
  } catch {
    // not Linux: fall through to what os.cpus() says
  }
  return cpus()[0]?.model ?? "unknown";
}

export function describeMachine(): Machine {
  return {
    cpu: cpuModel(),
    cores: availableParallelism(),
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    os: `${platform()} ${release()}`,
    node: process.version,
    load1: Number(loadavg()[0]!.toFixed(2)),
  };
}
