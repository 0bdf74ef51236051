import { readFile } from 'node:fs/promises';

/** The kernel's state of a listening TCP socket in /proc/net/tcp and tcp6. */
const LISTEN = '0A';

/** An address of /proc/net/tcp (IPv4: 8 hex digits, little-endian) or tcp6 (4 such words). */
function decode(hex: string): string {
  const words = hex.match(/.{8}/g) ?? [];
  const bytes = words.flatMap((word) =>
    (word.match(/../g) ?? []).reverse().map((b) => parseInt(b, 16)),
  );
  if (bytes.length === 4) return bytes.join('.');
  if (bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 255 && bytes[11] === 255) {
    return `::ffff:${bytes.slice(12).join('.')}`;
  }
  const groups = Array.from({ length: 8 }, (_, i) =>
    ((bytes[2 * i]! << 8) | bytes[2 * i + 1]!).toString(16),
  );
  return groups.join(':').replace(/(^|:)0(:0)+(:|$)/, '::');
}

/**
 * The addresses this machine's listening TCP sockets on `ports` are bound to, as the kernel says
 * (Linux's /proc/net/tcp and tcp6): `127.0.0.1` and `::1` are this machine alone, `0.0.0.0` and
 * `::` every interface.
 */
export async function listeningAddresses(ports: readonly number[]): Promise<string[]> {
  const wanted = new Set(ports);
  const found = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const text = await readFile(table, 'utf8').catch(() => '');
    for (const line of text.split('\n').slice(1)) {
      const [, local, , state] = line.trim().split(/\s+/);
      if (!local || state !== LISTEN) continue;
      const [address, port] = local.split(':');
      if (address && wanted.has(parseInt(port ?? '', 16))) found.add(decode(address));
    }
  }
  return [...found].sort();
}

/** Whether every address is this machine's own. */
export const loopbackOnly = (addresses: readonly string[]) =>
  addresses.every((address) => address === '127.0.0.1' || address === '::1');
