import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, parseAllDocuments } from 'yaml';

/** The repository root. */
export const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));

export const repoPath = (relative: string): string => join(repoRoot, relative);

export const readRepoFile = (relative: string): string => readFileSync(repoPath(relative), 'utf8');

export const repoFileExists = (relative: string): boolean => existsSync(repoPath(relative));

/** One YAML document, YAML merge keys (`<<: *anchor`) resolved as Compose resolves them. */
export const readYaml = (relative: string): unknown =>
  parse(readRepoFile(relative), { merge: true }) as unknown;

/** Every document of a multi-document YAML file; throws on a syntax error. */
export function readYamlDocuments(relative: string): unknown[] {
  return parseAllDocuments(readRepoFile(relative)).map((document) => {
    if (document.errors.length > 0) throw new Error(`${relative}: ${document.errors[0]!.message}`);
    return document.toJS() as unknown;
  });
}

/** Narrows `unknown` to a plain object, or fails saying what `what` was. */
export function asRecord(value: unknown, what: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new Error(`${what} is not a mapping`);
  return value as Record<string, unknown>;
}
