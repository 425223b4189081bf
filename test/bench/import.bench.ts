// npm run bench:import: `npm run import`'s rate against chDB's own bulk insert of the same rows,
// measured in one run on one store: one day of a busy market (2,000,000 trades, Binance spot
// `trades` format, SIMULATED prices and sizes: a timing input, never stored market data) as a
// .csv. chDB's own: INSERT INTO trades SELECT ... FROM file(<the csv>), run before and after the
// import (the mean is the reference; the machine is shared). Both fire the views of `trades`.
// Then the index history of the imported day, timed apart.
//   node test/bench/import.bench.ts [rows]
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultIndexParams } from '../../aggregate/indexPrice.ts';
import { defaultIndexSchedule } from '../../aggregate/indexRunner.ts';
import { createLogger } from '../../infra/log.ts';
import { migrate } from '../../infra/migrate.ts';
import { openStore } from '../../infra/store.ts';
import { binanceArchive } from '../../history/archives/binance.ts';
import type { ArchiveFormat } from '../../history/archives/format.ts';
import { importTimeouts, storeTarget } from '../../history/directTarget.ts';
import { importFiles } from '../../history/importRun.ts';

const rows = Number(process.argv[2] ?? 2_000_000);
const day = '2024-01-01';
const dir = mkdtempSync(join(tmpdir(), 'mds-import-bench-'));
const log = createLogger('silent');

/** A day of trades in the archive's format: ids consecutive, times spread over the day, a random walk. */
function writeDay(path: string): void {
  const start = Date.parse(`${day}T00:00:00Z`);
  const lines: string[] = [];
  let price = 42_000;
  let seed = 7;
  const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648);
  for (let i = 0; i < rows; i++) {
    price += (random() - 0.5) * 2;
    const qty = (random() * 0.1 + 0.00001).toFixed(5);
    lines.push(`${1_000_000_000 + i},${price.toFixed(2)},${qty},${(price * Number(qty)).toFixed(8)},${start + Math.floor((i * 86_400_000) / rows)},${random() < 0.5 ? 'True' : 'False'},True`);
  }
  writeFileSync(path, `${lines.join('\n')}\n`);
}

const store = await openStore({ MDS_DATA_DIR: join(dir, 'store'), CLICKHOUSE_DATABASE: 'mds', CLICKHOUSE_URL: undefined }, importTimeouts);
try {
  await migrate(store);
  const csv = join(dir, `BTCUSDT-trades-${day}.csv`);
  writeDay(csv);

  /** chDB's own bulk insert of the file, under another market name so that nothing of it is held. */
  const own = async (market: string) => {
    const started = performance.now();
    await store.client.command({
      query: `INSERT INTO trades (venue, market, asset, quote, trade_id, ts, received_at, price, quantity, side)
        SELECT 'binance', {market:String}, 'bitcoin', 'USDT', toString(id), fromUnixTimestamp64Milli(time, 'UTC'), now64(3), price, qty, if(maker, 'sell', 'buy')
        FROM file({path:String}, 'CSV', 'id UInt64, price Float64, qty Float64, quote_qty Float64, time Int64, maker Bool, best Bool')`,
      query_params: { market, path: csv },
      clickhouse_settings: { async_insert: 0, insert_deduplication_token: market },
    });
    return (performance.now() - started) / 1000;
  };

  const ownBefore = await own('OWN-BEFORE');
  const target = storeTarget(store, { embedded: true, index: { params: defaultIndexParams, schedule: defaultIndexSchedule }, log });
  const format = binanceArchive.kinds.trades as ArchiveFormat;
  const job = { path: csv, name: `BTCUSDT-trades-${day}.csv`, source: binanceArchive, format, market: 'BTCUSDT', period: { daily: day } };
  // The import without its index step (timed below on its own).
  const noIndex = { ...target, computeIndex: async () => ({ from: 0, to: 0, rows: 0, tookMs: 0 }) };
  const started = performance.now();
  const summary = await importFiles([job], { target: noIndex, now: Date.now(), force: false });
  const imported = (performance.now() - started) / 1000;
  const ownAfter = await own('OWN-AFTER');

  const [check] = await store.rows<{ n: number }>("SELECT count() AS n FROM trades WHERE market = 'BTCUSDT'");
  if (summary.counts.new !== rows || check?.n !== rows) throw new Error(`imported ${summary.counts.new}, stored ${check?.n}, expected ${rows}`);
  const ownSeconds = (ownBefore + ownAfter) / 2;
  const rate = (s: number) => Math.round(rows / s).toLocaleString('en-US');
  console.log(`chDB's own INSERT ... SELECT FROM file(csv): ${ownBefore.toFixed(2)} s and ${ownAfter.toFixed(2)} s, mean ${rate(ownSeconds)} rows/s`);
  console.log(`npm run import (direct, embedded):          ${imported.toFixed(2)} s for ${rows.toLocaleString('en-US')} trades, ${rate(imported)} rows/s`);
  console.log(`ratio import / chDB's own: ${(ownSeconds / imported).toFixed(2)} (target >= 0.7); one day of ${rows.toLocaleString('en-US')} trades in ${imported.toFixed(1)} s (target < 60 s)`);

  const indexStarted = performance.now();
  const index = await target.computeIndex({ from: Date.parse(`${day}T00:00:00Z`), to: Date.parse(`${day}T23:59:59.999Z`) });
  console.log(`index history of the day (+ its 24 h volume window): ${((performance.now() - indexStarted) / 1000).toFixed(1)} s, ${index.to - index.from + 1} s computed, ${index.rows} rows`);
  await target.close();
} finally {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
}
