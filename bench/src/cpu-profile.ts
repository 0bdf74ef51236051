// Reads a V8 CPU profile (`node --cpu-prof`) and says where the time went: self time by function
// and by the package or part of the project it belongs to.
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

export interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export interface Share {
  name: string;
  ms: number;
  /** Of the profile's whole time, idle included. */
  pct: number;
}

export interface ProfileSummary {
  totalMs: number;
  /** Time in no JavaScript and no native work: waiting on the event loop. */
  idleMs: number;
  byPart: Share[];
  byFunction: Share[];
}

/** Where a script belongs: an npm package, a workspace of the project, Node itself, or V8. */
export function partOf(url: string, functionName: string): string {
  if (url === '') {
    // V8's own frames: (program), (garbage collector), (idle), (root).
    return functionName.startsWith('(') ? functionName : '(native)';
  }
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  if (url.startsWith('node:')) return 'node';
  const workspace = /\/(apps|packages)\/([^/]+)\//.exec(url);
  if (workspace) return `${workspace[1]}/${workspace[2]}`;
  return url.split('/').slice(-2).join('/');
}

/** The summary of `profile`: the `top` largest self times by part and by function. */
export function summarize(profile: CpuProfile, top = 25): ProfileSummary {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, index) => {
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[index] ?? 0));
  });
  const totalUs = profile.endTime - profile.startTime;
  const parts = new Map<string, number>();
  const functions = new Map<string, number>();
  let idleUs = 0;
  for (const [id, us] of selfUs) {
    const frame = byId.get(id)?.callFrame;
    if (!frame) continue;
    if (frame.functionName === '(idle)') idleUs += us;
    const part = partOf(frame.url, frame.functionName);
    parts.set(part, (parts.get(part) ?? 0) + us);
    const file = frame.url.split('/').slice(-1)[0] ?? '';
    const where = file ? ` ${part === file ? '' : `${part} `}${file}:${frame.lineNumber + 1}` : '';
    const name = `${frame.functionName || '(anonymous)'}${where}`;
    functions.set(name, (functions.get(name) ?? 0) + us);
  }
  const shares = (map: Map<string, number>): Share[] =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, us]) => ({
        name,
        ms: Math.round(us / 1000),
        pct: Math.round((us / Math.max(1, totalUs)) * 1000) / 10,
      }));
  return {
    totalMs: Math.round(totalUs / 1000),
    idleMs: Math.round(idleUs / 1000),
    byPart: shares(parts),
    byFunction: shares(functions),
  };
}

export function readProfile(file: string): CpuProfile {
  return JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
}

/** The summary as lines of text, busy time first. */
export function formatSummary(title: string, summary: ProfileSummary): string {
  const busy = summary.totalMs - summary.idleMs;
  const rows = (shares: Share[]) =>
    shares
      .filter((share) => share.name !== '(idle)')
      .map(
        (share) =>
          `  ${String(share.ms).padStart(7)} ms ${String(share.pct).padStart(5)} %  ${share.name}`,
      );
  return [
    `${title}: ${summary.totalMs} ms profiled, ${busy} ms busy, ${summary.idleMs} ms idle`,
    'self time by part:',
    ...rows(summary.byPart),
    'self time by function:',
    ...rows(summary.byFunction),
  ].join('\n');
}

/** One part's self time per unit of work (a job, an action) in two profiles, in microseconds. */
export interface PartCost {
  name: string;
  baseUs: number;
  oursUs: number;
}

/**
 * Self time by part per unit of work in a baseline's profile and ours (each summarized with every
 * part: `summarize(profile, Infinity)`), busy time first, then the parts by how much more ours
 * spends; idle left out. Each profile covers its process's whole life, start-up included.
 */
export function partCosts(
  base: { summary: ProfileSummary; units: number },
  ours: { summary: ProfileSummary; units: number },
): PartCost[] {
  const perUnit = (ms: number, units: number) => Math.round((ms * 1000) / Math.max(1, units));
  const names = new Set([...base.summary.byPart, ...ours.summary.byPart].map((s) => s.name));
  names.delete('(idle)');
  const msOf = (summary: ProfileSummary, name: string) =>
    summary.byPart.find((share) => share.name === name)?.ms ?? 0;
  const busy = (summary: ProfileSummary) => summary.totalMs - summary.idleMs;
  const rows = [...names].map((name) => ({
    name,
    baseUs: perUnit(msOf(base.summary, name), base.units),
    oursUs: perUnit(msOf(ours.summary, name), ours.units),
  }));
  return [
    {
      name: 'busy',
      baseUs: perUnit(busy(base.summary), base.units),
      oursUs: perUnit(busy(ours.summary), ours.units),
    },
    ...rows
      .filter((row) => row.baseUs > 0 || row.oursUs > 0)
      .sort((a, b) => b.oursUs - b.baseUs - (a.oursUs - a.baseUs)),
  ];
}
