import { readFileSync } from 'node:fs';
import { expect, test } from 'vitest';
import { generateSchemaDoc, schemaDocPath } from '../schemaDoc.ts';

test('infra/SCHEMA.md is what the migrations create (regenerate: node infra/schemaDoc.ts)', async () => {
  const doc = await generateSchemaDoc();
  // Every table the service writes is documented, with its columns.
  for (const table of ['trades', 'candles_1m', 'index_ticks', 'market_quality', 'liquidations', 'api_keys']) expect(doc).toContain(`### \`${table}\``);
  expect(readFileSync(schemaDocPath, 'utf8')).toBe(doc);
});
