import { execFile } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { Cluster } from 'ioredis';
import { freePort, PrivateRedis } from './redis-server.js';

const run = promisify(execFile);

/**
 * A Redis Cluster of the test's own: `size` `redis-server` processes in cluster mode on loopback,
 * every one a master (no replicas), slots spread by `redis-cli --cluster create`.
 */
export class PrivateRedisCluster {
  /** `redis://host:port,host:port,…`: every node, as `REDIS_URL` with `REDIS_CLUSTER=true`. */
  readonly url: string;

  private constructor(readonly nodes: readonly PrivateRedis[]) {
    this.url = `redis://${nodes.map((node) => `127.0.0.1:${node.port}`).join(',')}`;
  }

  static async start(size = 3, timeoutMs = 20_000): Promise<PrivateRedisCluster> {
    const nodes: PrivateRedis[] = [];
    try {
      for (let i = 0; i < size; i++) {
        nodes.push(
          await PrivateRedis.start({
            args: [
              '--cluster-enabled',
              'yes',
              '--cluster-config-file',
              'nodes.conf',
              // The bus port is chosen too: port + 10000 may be past 65535 or taken.
              '--cluster-port',
              String(await freePort()),
              '--cluster-node-timeout',
              '5000',
            ],
          }),
        );
      }
      const addresses = nodes.map((node) => `127.0.0.1:${node.port}`);
      await run('redis-cli', [
        '--cluster',
        'create',
        ...addresses,
        '--cluster-replicas',
        '0',
        '--cluster-yes',
      ]);
      const cluster = new PrivateRedisCluster(nodes);
      await cluster.waitUntilOk(timeoutMs);
      return cluster;
    } catch (error) {
      await Promise.all(nodes.map((node) => node.destroy()));
      throw error;
    }
  }

  /** Resolves once every node reports `cluster_state:ok` (the nodes agree on every slot). */
  private async waitUntilOk(timeoutMs: number): Promise<void> {
    const clients = this.nodes.map((node) => node.client());
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
      this.nodes.map((node) => ({ host: '127.0.0.1', port: node.port })),
      { redisOptions: { maxRetriesPerRequest: 1 } },
    );
  }

  /** Stops every node and removes their data directories. */
  async destroy(): Promise<void> {
    await Promise.all(this.nodes.map((node) => node.destroy()));
  }
}
