// What the bench's processes use, read from /proc: peak RSS while a phase runs, CPU time.
import { readdirSync, readFileSync } from 'node:fs';

function rssKb(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** The pids of `pid`'s children (the ingress cluster's processes). */
function childrenOf(pid: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (parent === pid) children.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return children;
}

/** RSS in MB of a process and its children: together, and the largest one. */
export function treeRssMb(pid: number): { total: number; largest: number } {
  const each = [pid, ...childrenOf(pid)].map((one) => rssKb(one) / 1024);
  return { total: each.reduce((sum, mb) => sum + mb, 0), largest: Math.max(...each) };
}

/**
 * CPU time (user and system) that `pid` and its children have used so far, in milliseconds, with
 * /proc's resolution (10 ms).
 */
export function treeCpuMs(pid: number): number {
  const ticksPerSecond = 100; // USER_HZ, 100 on every Linux the bench runs on
  let ticks = 0;
  for (const one of [pid, ...childrenOf(pid)]) {
    try {
      const stat = readFileSync(`/proc/${one}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]); // utime, stime
    } catch {
      // gone meanwhile
    }
  }
  return (ticks * 1000) / ticksPerSecond;
}

/** Samples the peak RSS of some process trees every 250 ms until stopped. */
export class RssSampler {
  readonly peakMb: Record<string, number> = {};
  private readonly peakLargestMb: Record<string, number> = {};
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly pids: Record<string, number>) {
    this.timer = setInterval(() => this.sample(), 250);
    this.sample();
  }

  /** Samples one more process tree from now on. */
  add(name: string, pid: number): void {
    this.pids[name] = pid;
    this.sample();
  }

  private sample(): void {
    for (const [name, pid] of Object.entries(this.pids)) {
      const rss = treeRssMb(pid);
      this.peakMb[name] = Math.max(this.peakMb[name] ?? 0, rss.total);
      this.peakLargestMb[name] = Math.max(this.peakLargestMb[name] ?? 0, rss.largest);
    }
  }

  /** The peak RSS of the largest single process of `name`'s tree. */
  peakProcessMb(name: string): number {
    return Math.round(this.peakLargestMb[name] ?? 0);
  }

  stop(): Record<string, number> {
    this.sample();
    clearInterval(this.timer);
    return Object.fromEntries(
      Object.entries(this.peakMb).map(([name, mb]) => [name, Math.round(mb)]),
    );
  }
}
