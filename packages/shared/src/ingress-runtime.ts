/**
 * The V8 flags the ingress runs with (its image's CMD, and the bench). Under load its heap in use
 * stays near 30 MB, but with V8's defaults garbage piles up in the old space before a full
 * collection, which took the process to 190-210 MB RSS under 50 connections. An old space of at
 * most 128 MB (four times what is live) keeps it near 130 MB, for about 20 % more CPU per
 * request; the semi-spaces stay at 16 MB (V8's default here, written out so that a V8 that sizes
 * them from the old space does not shrink them: at 4 MB they cost another 9 %). Measured with
 * `npm run bench:ingress-flags` (docs/performance.md).
 */
export const INGRESS_NODE_FLAGS = ['--max-old-space-size=128', '--max-semi-space-size=16'] as const;
