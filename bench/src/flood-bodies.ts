// The flood phase's bodies (docs/performance.md): JSON objects of nearly MAX_BODY_BYTES that
// no configured secret signed, in the two shapes that cost an ingress most before it can tell the
// sender is not genuine. Each carries a well-formed forged `signature`, so that a verifier cannot
// refuse it on the signature's form alone and must compute its digests.
import { createServer } from 'node:net';

const FORGED_SIGNATURE = `sha256=${'0badc0de'.repeat(8)}`;
const HEAD = `{"signature":"${FORGED_SIGNATURE}"`;
const LETTERS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';

export interface FloodBody {
  /** What the answers are counted under. */
  shape: 'many_keys' | 'long_keys';
  body: Buffer;
  /** Members of the top-level object, `signature` included. */
  members: number;
}

/** `n` in base 52 (letters only, never an array index), `width` letters. */
function letters(n: number, width: number): string {
  let text = '';
  for (let i = 0; i < width; i++, n = Math.floor(n / LETTERS.length)) {
    text = LETTERS[n % LETTERS.length]! + text;
  }
  return text;
}

/**
 * The many-keys shape: one object of ~29,000 four-letter keys in no order (each costs a sort
 * comparison and a property), padded to exactly `bytes` by a last string member.
 */
export function manyKeysBody(bytes: number): FloodBody {
  const space = LETTERS.length ** 4;
  const parts = [HEAD];
  let length = HEAD.length;
  const padOverhead = ',"pad":""}'.length;
  let members = 1;
  // 7919 is prime and does not divide 52^4: i -> i * 7919 mod 52^4 visits every key once.
  for (let i = 0; i < space && length + 10 + padOverhead <= bytes; i++, members++) {
    const member = `,"${letters((i * 7919) % space, 4)}":0`;
    parts.push(member);
    length += member.length;
  }
  parts.push(`,"pad":"${'x'.repeat(bytes - length - padOverhead)}"}`);
  return { shape: 'many_keys', body: Buffer.from(parts.join('')), members: members + 1 };
}

/**
 * The costliest shape under a 2,000-value limit: one object of `members` members (2,000 JSON
 * values with the object itself), padded to exactly `bytes` by long keys of letters in no order.
 * It passes the value count, so it is parsed and, its signature being well-formed, digested both
 * ways; canonicalising costs per character of every key.
 */
export function longKeysBody(bytes: number, members = 1999): FloodBody {
  const keys = members - 1;
  // Each member is `,"<key>":0`: the key and 5 bytes.
  const room = bytes - HEAD.length - '}'.length - keys * 5;
  const keyLength = Math.floor(room / keys);
  const longer = room - keyLength * keys;
  const parts = [HEAD];
  // A fixed pseudo-random sequence (an LCG): the same bodies in every run.
  let seed = 12345;
  const letter = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return LETTERS[Math.floor(seed / 65536) % LETTERS.length]!; // its high bits: the low ones repeat
  };
  for (let i = 0; i < keys; i++) {
    const length = keyLength + (i < longer ? 1 : 0);
    let key = letters((i * 7919) % keys, 4); // distinct
    while (key.length < length) key = letter() + key;
    parts.push(`,"${key}":0`);
  }
  parts.push('}');
  return { shape: 'long_keys', body: Buffer.from(parts.join('')), members };
}

/** Throws a readable error unless this machine can send from `address` (e.g. 127.0.0.2). */
export async function checkLocalAddress(address: string): Promise<void> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error) =>
      reject(
        new Error(
          `cannot send from ${address} (${error.message}): the flood needs a second ` +
            'loopback address (Linux has all of 127.0.0.0/8; macOS: sudo ifconfig lo0 alias ' +
            `${address})`,
        ),
      ),
    );
    server.listen(0, address, resolve);
  });
  server.close();
}
