/**
 * The V8 flags the ingress runs with (its image's CMD, and the bench). Under load its heap in use
 * stays near 30 MB, but V8 lets garbage pile up to about 75 MB of old space before a full
 * collection and keeps 16 MB semi-spaces, which took the process to 185-195 MB RSS under 50
 * connections. With an old space of at most 128 MB (four times what is live) and 4 MB
 * semi-spaces it stays near 100 MB with no loss of throughput the bench can see
 * (docs/performance.md).
 */
export const INGRESS_NODE_FLAGS = ['--max-old-space-size=128', '--max-semi-space-size=4'] as const;
