// The pictures of docs/ (the console's pages, a trace's waterfall) are taken by the tests that
// drive those pages, but written only when asked (`npm run docs -- --pictures`): a test run leaves
// the tree as it found it. Otherwise the test checks the committed picture against the page it
// would have taken: the same title (kept in the PNG's own text chunk) and about the same size.
import { readFile, writeFile } from 'node:fs/promises';
import { crc32 } from 'node:zlib';
import { expect } from 'vitest';
import type { Page } from 'playwright-core';

/** Set by `npm run docs -- --pictures`: the tests write their pictures into docs/. */
export const WRITE_PICTURES = process.env.PW_WRITE_PICTURES === '1';

/**
 * Photographs `page` (the whole page) as the picture at `path`, titled `title`: written there when
 * pictures are asked for, else checked against the committed one.
 */
export async function docsPicture(page: Page, path: string, title: string): Promise<void> {
  const png = await page.screenshot({ fullPage: true });
  if (WRITE_PICTURES) {
    await writeFile(path, withTitle(png, title));
    return;
  }
  const committed = await readFile(path);
  const was = pngFacts(committed);
  const now = pngFacts(png);
  expect(was.title, `${path}: the page it shows`).toBe(title);
  expect(was.width, `${path}: its width`).toBe(now.width);
  // The data on the page differs a little from run to run; another layout changes it more.
  expect(
    was.height / now.height,
    `${path}: its height, ${was.height} against ${now.height} now`,
  ).toBeGreaterThan(0.75);
  expect(
    was.height / now.height,
    `${path}: its height, ${was.height} against ${now.height} now`,
  ).toBeLessThan(1.33);
}

/** The PNG with a `tEXt` chunk `Title` right after its header chunk. */
function withTitle(png: Buffer, title: string): Buffer {
  const data = Buffer.from(`Title\0${title}`, 'latin1');
  const chunk = Buffer.alloc(12 + data.length);
  chunk.writeUInt32BE(data.length, 0);
  chunk.write('tEXt', 4, 'latin1');
  data.copy(chunk, 8);
  chunk.writeUInt32BE(crc32(chunk.subarray(4, 8 + data.length)), 8 + data.length);
  // The signature (8 bytes), then IHDR: its length, type, 13 bytes of data and its CRC.
  const afterHeader = 8 + 12 + 13;
  return Buffer.concat([png.subarray(0, afterHeader), chunk, png.subarray(afterHeader)]);
}

/** A PNG's width and height (from its header chunk) and its `Title` text, if it has one. */
function pngFacts(png: Buffer): { width: number; height: number; title: string | undefined } {
  let title: string | undefined;
  for (let at = 8; at + 12 <= png.length;) {
    const length = png.readUInt32BE(at);
    const type = png.toString('latin1', at + 4, at + 8);
    if (type === 'tEXt') {
      const [key, text] = png.toString('latin1', at + 8, at + 8 + length).split('\0');
      if (key === 'Title') title = text;
    }
    if (type === 'IDAT') break;
    at += 12 + length;
  }
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20), title };
}
