import { afterAll, beforeAll, expect, test } from 'vitest';
import { openTestStore } from '../../../test/support/harness.ts';
import { usdQuotes } from '../currencies.ts';

// Three objects made by frozen migrations still filter on their own copy of the USD quote list
// (a materialized view or a MATERIALIZED column cannot take a query parameter): 0040
// liquidations.value_usd, 0044 asset_first_prints_from_trades, 0081 asset_price_extremes_from_trades.
// This pins them to usdQuotes: changing the list needs a migration that replaces them.

let env: Awaited<ReturnType<typeof openTestStore>>;
beforeAll(async () => {
  env = await openTestStore();
});
afterAll(async () => {
  await env.dispose();
});

/** The quotes of the one `quote IN ('A', 'B', ...)` in a stored definition. */
function quotesIn(definition: string): string[] {
  const lists = [...definition.matchAll(/quote IN \(([^)]*)\)/g)];
  expect(lists, definition).toHaveLength(1);
  return lists[0]![1]!.split(',').map((q) => q.trim().replace(/^'|'$/g, ''));
}

test('the live views and the liquidations column filter on exactly usdQuotes', async () => {
  const views = await env.store.rows<{ name: string; definition: string }>(
    `SELECT name, create_table_query AS definition FROM system.tables
     WHERE database = currentDatabase() AND name IN {names:Array(String)} ORDER BY name`,
    { names: ['asset_first_prints_from_trades', 'asset_price_extremes_from_trades'] },
  );
  const [column] = await env.store.rows<{ definition: string }>(
    `SELECT default_expression AS definition FROM system.columns
     WHERE database = currentDatabase() AND table = 'liquidations' AND name = 'value_usd'`,
  );
  expect(views.map((v) => v.name)).toEqual(['asset_first_prints_from_trades', 'asset_price_extremes_from_trades']);
  for (const definition of [...views.map((v) => v.definition), column!.definition]) {
    expect(quotesIn(definition).sort()).toEqual([...usdQuotes].sort());
  }
});
