// A discovered asset's contracts, from its venue's listing to its coin page: a collector's status
// carries them (ingest/venue.ts, `baseContracts`), the status sink stores them
// (market_connections.base_contracts), the universe reads the latest that gave any, and
// /v1/coins/{id} serves them as `platforms` and `detail_platforms` (decimals unknown).
import { describe, expect, it } from 'vitest';
import { createMemoryBus } from '../../infra/bus/memoryBus.ts';
import type { StatusEvent } from '../../infra/events.ts';
import { startStatusSink } from '../../aggregate/statusSink.ts';
import { useTestApi } from '../../test/support/apiHarness.ts';
import { computeIndex, silentLog, trade } from '../../test/support/harness.ts';
import { until } from '../../test/support/until.ts';

const T = Date.now();
const nowSecond = Math.floor(T / 1000);
const status = (asset: string, market: string, ts: number, baseContracts?: StatusEvent['baseContracts']): StatusEvent => ({
  type: 'status', venue: 'kucoin', market, asset, quote: 'USDT', ts, receivedAt: ts, connected: true, ...(baseContracts ? { baseContracts } : {}),
});
const usdtLike = [
  { platform: 'ethereum', address: '0x1111111111111111111111111111111111111111' },
  { platform: 'tron', address: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t' },
];

describe('discovered contracts', () => {
  const api = useTestApi({
    keyName: 'contracts-test',
    seed: async (store) => {
      await store.insert('trades', [
        trade({ venue: 'kucoin', market: 'TOKA-USDT', asset: 'toka--kucoin', quote: 'USDT', trade_id: 'a', ts: (nowSecond - 3) * 1000, price: 2, quantity: 10 }),
        trade({ venue: 'kucoin', market: 'PLAIN-USDT', asset: 'plain--kucoin', quote: 'USDT', trade_id: 'b', ts: (nowSecond - 3) * 1000, price: 3, quantity: 10 }),
      ]);
      await computeIndex(store, T + 2_500);
      // The coin page values every figure in the currencies the test config serves: their rates of today.
      const today = new Date(T).toISOString().slice(0, 10);
      await store.insert('fx_reference_rates', Object.entries({ ars: 1_200.5, brl: 5.25, sek: 10.5 }).map(([currency, per_usd]) => ({ date: today, currency, per_usd, source: 'test', imported_at: T })));
      const bus = createMemoryBus();
      const statuses = [
        status('toka--kucoin', 'TOKA-USDT', T - 50_000, [{ platform: 'ethereum', address: '0x9999999999999999999999999999999999999999' }]),
        status('toka--kucoin', 'TOKA-USDT', T - 40_000, usdtLike),
        // A later status without contracts (the currency list failed that time) does not take them away.
        status('toka--kucoin', 'TOKA-USDT', T - 30_000),
        status('plain--kucoin', 'PLAIN-USDT', T - 30_000),
      ];
      const sink = await startStatusSink({ bus, store, log: silentLog, batchRows: 1_000, batchMs: 20, group: 'contracts-statuses' });
      try {
        bus.publish(statuses);
        await until(() => sink.stats().inserted === statuses.length, 'the statuses to be stored');
      } finally {
        await sink.stop();
      }
    },
  });

  it("/v1/coins/{id}: the latest contracts its venue's listing gave, as platforms with decimals unknown; none for one whose listing gave none", async () => {
    const res = await api.get('/v1/coins/toka--kucoin');
    expect(res.status, res.text).toBe(200);
    expect(res.json).toMatchObject({
      platforms: { ethereum: '0x1111111111111111111111111111111111111111', tron: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t' },
      detail_platforms: {
        ethereum: { contract_address: '0x1111111111111111111111111111111111111111', decimal_place: null },
        tron: { contract_address: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t', decimal_place: null },
      },
    });
    expect(Object.keys((res.json as { platforms: object }).platforms)).toEqual(['ethereum', 'tron']);
    const plain = await api.get('/v1/coins/plain--kucoin');
    expect(plain.status, plain.text).toBe(200);
    expect(plain.json).toMatchObject({ platforms: {}, detail_platforms: {} });
  });
});
