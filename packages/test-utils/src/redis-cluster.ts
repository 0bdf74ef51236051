import { execFile } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { Cluster } from 'ioredis';
import { freePort, portTaken, PrivateRedis } from './redis-server.js';

const run = promisify(execFile);

export interface PrivateRedisClusterOptions {
  /** Replicas of each master. @defaultValue 0 */
  replicas?: number;
  /**
   * `cluster-node-timeout` (ms): how long a master may be unreachable before its replica takes
   * over. @defaultValue 5000
   */
  nodeTimeoutMs?: number;
  /** How long `start` waits for the cluster to be ok (ms). @defaultValue 20000 */
  timeoutMs?: number;
}

/** What `INFO` says of one master: its port, commands run and CPU used since its start. */
export interface MasterStats {
  port: number;
  /** Every command's calls (`INFO commandstats`), scripts' own commands included. */
  calls: number;
  /** CPU seconds, user and system, of the main thread and its children (`INFO cpu`). */
  cpuSeconds: number;
}

/**
 * A Redis Cluster of the test's own: `redis-server` processes in cluster mode on loopback, `size`
 * masters with `replicas` replicas each, slots spread in equal runs by `redis-cli --cluster
 * create`.
 */
export class PrivateRedisCluster {
  /** `redis://host:port,host:port,…`: every node, as `REDIS_URL` with `REDIS_CLUSTER=true`. */
  readonly url: string;

  private constructor(readonly nodes: readonly PrivateRedis[]) {
    this.url = `redis://${nodes.map((node) => `127.0.0.1:${node.port}`).join(',')}`;
  }

  static async start(
    size = 3,
    options: PrivateRedisClusterOptions = {},
  ): Promise<PrivateRedisCluster> {
    const replicas = options.replicas ?? 0;
    const nodes: PrivateRedis[] = [];
    try {
      for (let i = 0; i < size * (1 + replicas); i++) nodes.push(await startNode(options));
      const addresses = nodes.map((node) => `127.0.0.1:${node.port}`);
      await run('redis-cli', [
        '--cluster',
        'create',
        ...addresses,
        '--cluster-replicas',
        String(replicas),
        '--cluster-yes',
      ]);
      const cluster = new PrivateRedisCluster(nodes);
      await cluster.waitUntilOk(options.timeoutMs ?? 20_000);
      if (replicas > 0) await cluster.waitForReplicas(size * replicas, options.timeoutMs ?? 20_000);
      return cluster;
    } catch (error) {
      await Promise.all(nodes.map((node) => node.destroy()));
      throw error;
    }
  }

  /** The nodes that are up. */
  private get running(): PrivateRedis[] {
    return this.nodes.filter((node) => !this.killed.has(node.port));
  }

  private readonly killed = new Set<number>();

  /** Resolves once every node that is up reports `cluster_state:ok` (they agree on every slot). */
  async waitUntilOk(timeoutMs = 20_000): Promise<void> {
    const clients = this.running.map((node) => node.client());
    const deadline = Date.now() + timeoutMs;
    try {
      for (;;) {
        const infos = await Promise.all(clients.map((client) => client.cluster('INFO')));
        if (infos.every((info) => info.includes('cluster_state:ok'))) return;
        if (Date.now() > deadline) {
          throw new Error(`the cluster is not ok after ${timeoutMs} ms:\n${infos.join('\n')}`);
        }
        // Gossip between the nodes has no event to wait for: ask again shortly.
        await sleep(50);
      }
    } finally {
      for (const client of clients) client.disconnect();
    }
  }

  /** Resolves once `count` replicas are linked to their masters (`master_link_status:up`). */
  private async waitForReplicas(count: number, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const infos = await Promise.all(this.running.map((node) => this.ask(node, 'replication')));
      if (infos.filter((info) => info.includes('master_link_status:up')).length >= count) return;
      if (Date.now() > deadline)
        throw new Error(`fewer than ${count} replicas linked after ${timeoutMs} ms`);
      // Replication's first sync has no event to wait for: ask again shortly.
      await sleep(50);
    }
  }

  private async ask(node: PrivateRedis, section: string): Promise<string> {
    const client = node.client();
    try {
      return await client.info(section);
    } finally {
      client.disconnect();
    }
  }

  /** The ports of the nodes that are masters now (up, and holding slots). */
  async masters(): Promise<number[]> {
    const infos = await Promise.all(
      this.running.map(async (node) => ({ node, info: await this.ask(node, 'replication') })),
    );
    return infos.filter(({ info }) => info.includes('role:master')).map(({ node }) => node.port);
  }

  /** Each master's commands and CPU so far (`INFO commandstats` and `INFO cpu`). */
  async masterStats(): Promise<MasterStats[]> {
    const ports = await this.masters();
    return Promise.all(
      ports.map(async (port) => {
        const node = this.nodes.find((candidate) => candidate.port === port)!;
        const [commands, cpu] = await Promise.all([
          this.ask(node, 'commandstats'),
          this.ask(node, 'cpu'),
        ]);
        const calls = [...commands.matchAll(/calls=(\d+)/g)].reduce(
          (sum, [, n]) => sum + Number(n),
          0,
        );
        const seconds = (name: string) =>
          Number(new RegExp(`${name}:([\\d.]+)`).exec(cpu)?.[1] ?? 0);
        return { port, calls, cpuSeconds: seconds('used_cpu_sys') + seconds('used_cpu_user') };
      }),
    );
  }

  /** Kills the master on `port` (SIGKILL) and resolves once a replica has taken its slots. */
  async killMaster(port: number, timeoutMs = 30_000): Promise<void> {
    const node = this.nodes.find((candidate) => candidate.port === port);
    if (!node) throw new Error(`no node on port ${port}`);
    const before = await this.masters();
    await node.kill();
    this.killed.add(port);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const now = await this.masters();
      if (now.length === before.length && !now.includes(port)) break;
      if (Date.now() > deadline)
        throw new Error(`no replica took over from ${port} in ${timeoutMs} ms`);
      // The failover election has no event a client can wait for: ask again shortly.
      await sleep(100);
    }
    await this.waitUntilOk(timeoutMs);
  }

  /**
   * Starts a killed node again on its port and data folder: it rejoins the cluster as a replica of
   * the master that took over from it. Resolves once its replication link is up.
   */
  async restart(port: number, timeoutMs = 30_000): Promise<void> {
    const node = this.nodes.find((candidate) => candidate.port === port);
    if (!node) throw new Error(`no node on port ${port}`);
    await node.resume();
    this.killed.delete(port);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const info = await this.ask(node, 'replication');
      if (info.includes('role:slave') && info.includes('master_link_status:up')) return;
      if (Date.now() > deadline)
        throw new Error(`${port} did not rejoin as a replica in ${timeoutMs} ms`);
      // Rejoining and the first sync have no event a client can wait for: ask again shortly.
      await sleep(100);
    }
  }

  /**
   * `REDIS_URL` with the node that holds `key` named last, so a client that does not follow the
   * cluster's redirections (a plain `Redis` on the first seed) would fail.
   */
  async urlWithOwnerLast(key: string): Promise<string> {
    const client = this.nodes[0]!.client();
    try {
      const slot = await client.cluster('KEYSLOT', key);
      const ranges = await client.cluster('SLOTS');
      const owner = ranges.find(([from, to]) => slot >= from && slot <= to)?.[2]?.[1];
      const ports = this.nodes.map((node) => node.port).filter((port) => port !== owner);
      if (owner === undefined || ports.length === this.nodes.length) {
        throw new Error(`no node holds slot ${slot}`);
      }
      return `redis://${[...ports, owner].map((port) => `127.0.0.1:${port}`).join(',')}`;
    } finally {
      client.disconnect();
    }
  }

  /** A cluster client for assertions; the caller disconnects it. */
  client(): Cluster {
    return new Cluster(
      this.running.map((node) => ({ host: '127.0.0.1', port: node.port })),
      { redisOptions: { maxRetriesPerRequest: 1 } },
    );
  }

  /** Stops every node and removes their data directories. */
  async destroy(): Promise<void> {
    await Promise.all(this.nodes.map((node) => node.destroy()));
  }
}

/**
 * One node in cluster mode. Its bus port is chosen too (port + 10000 may be past 65535 or taken),
 * and chosen again, with its port, when another process took it before the node's bind.
 */
async function startNode(options: PrivateRedisClusterOptions): Promise<PrivateRedis> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await PrivateRedis.start({
        args: [
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          'nodes.conf',
          '--cluster-port',
          String(await freePort()),
          '--cluster-node-timeout',
          String(options.nodeTimeoutMs ?? 5000),
        ],
      });
    } catch (error) {
      if (attempt >= 5 || !portTaken(error)) throw error;
    }
  }
}
