// The server side of api.bench.ts, in its own process so that the load generator does not share
// its event loop: an API over a store holding one simulated day of trades for every catalog
// asset, and a bare Express app that answers each benchmarked path with a cached body of the
// same size (the baseline). Prints {"api", "bare", "key", "paths"} once ready; serves until SIGTERM.
import { mkdtempSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import { computeIndex } from '../support/harness.ts';
import { KeyStore } from '../../api/keys.ts';
import { startApi } from '../../api/server.ts';
import { catalogAssets } from '../../infra/catalog/catalog.ts';
import { loadConfig } from '../../infra/config.ts';
import { createLogger } from '../../infra/log.ts';
import { migrate } from '../../infra/migrate.ts';
import { openStore } from '../../infra/store.ts';

const paths = (process.env.BENCH_PATHS ?? '/v1/prices,/v1/coins,/v1/coins/bitcoin/ohlc').split(',');
const dir = mkdtempSync(join(tmpdir(), 'mds-bench-api-'));
// The quota is not what is measured: high enough never to answer 429.
const config = loadConfig({ PORT: '0', LOG_LEVEL: 'warn', MDS_DATA_DIR: dir, QUOTA_PER_HOUR: '1000000000' });
const store = await openStore(config);
await migrate(store);

// One trade per asset every 60 s over the last 24 h, on one USDT market per asset.
const now = Date.now();
const stepMs = 60_000;
const rows = [];
for (const [a, asset] of catalogAssets.entries()) {
  for (let t = now - 86_400_000, i = 0; t < now; t += stepMs, i++) {
    rows.push({
      venue: 'bench', market: `${asset.symbol.toUpperCase()}USDT`, asset: asset.id, quote: 'USDT', trade_id: String(i),
      ts: t, received_at: t, price: (a + 1) * (100 + Math.sin(i / 50)), quantity: 1 + (i % 7), side: i % 2 ? 'buy' : 'sell',
    });
  }
}
for (let i = 0; i < rows.length; i += 50_000) await store.insert('trades', rows.slice(i, i + 50_000), `bench-api-${i}`);
// The index runner's work for that day, as the aggregate role would have done it.
await computeIndex(store, now, 86_400_000);

const { key } = await new KeyStore(store).create('bench');
const api = await startApi({ store, config, log: createLogger('warn') });

const bare = express();
bare.set('etag', false);
const sizes: Record<string, number> = {};
for (const path of paths) {
  const res = await fetch(api.url + path, { headers: { 'x-api-key': key } });
  if (res.status !== 200) throw new Error(`${path}: HTTP ${res.status} ${await res.text()}`);
  const body = Buffer.from(await res.arrayBuffer());
  sizes[path] = body.length;
  bare.get(path, (_req, r) => void r.type('json').send(body));
}
const bareServer = bare.listen(0, '127.0.0.1');
await once(bareServer, 'listening');

process.stdout.write(JSON.stringify({ api: api.url, bare: `http://127.0.0.1:${(bareServer.address() as AddressInfo).port}`, key, sizes }) + '\n');

process.once('SIGTERM', () => {
  bareServer.close();
  void api
    .close()
    .then(() => store.close())
    .then(() => rmSync(dir, { recursive: true, force: true }))
    .then(() => process.exit(0));
});
