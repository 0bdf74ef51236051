import { createHash, createHmac, pbkdf2Sync, randomBytes } from 'node:crypto';

const hmac = (key: Buffer, text: string) => createHmac('sha256', key).update(text).digest();

/**
 * The form in which PostgreSQL keeps a SCRAM-SHA-256 password (RFC 5802/7677), which
 * `ALTER ROLE … PASSWORD` stores as given: the password itself never reaches the server, so no
 * statement in its log can show it. `password` is plain ASCII (no SASLprep is applied).
 */
export function scramSha256Verifier(password: string, iterations = 4096): string {
  const salt = randomBytes(16);
  const salted = pbkdf2Sync(password, salt, iterations, 32, 'sha256');
  const storedKey = createHash('sha256').update(hmac(salted, 'Client Key')).digest();
  const serverKey = hmac(salted, 'Server Key');
  const b64 = (bytes: Buffer) => bytes.toString('base64');
  return `SCRAM-SHA-256$${iterations}:${b64(salt)}$${b64(storedKey)}:${b64(serverKey)}`;
}
