import { randomBytes } from 'node:crypto';

const ID_BYTES = 16;
let idPool = Buffer.alloc(0);
let idOffset = 0;

/**
 * An unguessable webhook id, `wh_` and 128 random bits in base64url, cut from a pool filled 4 KB
 * at a time (one call to the system's random source for 256 ids instead of one each).
 */
export function newWebhookId(): string {
  if (idOffset + ID_BYTES > idPool.length) {
    idPool = randomBytes(ID_BYTES * 256);
    idOffset = 0;
  }
  const id = idPool.toString('base64url', idOffset, idOffset + ID_BYTES);
  idOffset += ID_BYTES;
  return `wh_${id}`;
}
