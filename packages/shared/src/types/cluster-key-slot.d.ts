/** `cluster-key-slot` (ioredis's own slot function) ships no types: Redis Cluster's hash slot of a key. */
declare module 'cluster-key-slot' {
  /** The slot (0-16383) of `key`, honouring a hash tag (`{...}`) as Redis Cluster does. */
  function calculateSlot(key: string | Buffer): number;
  export default calculateSlot;
}
