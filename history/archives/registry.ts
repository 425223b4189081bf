// Every venue whose public bulk trade archive `npm run import` reads.
import { binanceArchive, binanceFuturesArchive } from './binance.ts';
import { bitmexArchive } from './bitmex.ts';
import { bybitLinearArchive, bybitSpotArchive } from './bybit.ts';
import { gateArchive } from './gate.ts';
import { kucoinArchive } from './kucoin.ts';
import { okxArchive, okxSwapArchive } from './okx.ts';
import type { ArchiveSource } from './source.ts';

export const archiveSources: readonly ArchiveSource[] = [
  binanceArchive,
  binanceFuturesArchive,
  bybitSpotArchive,
  bybitLinearArchive,
  okxArchive,
  okxSwapArchive,
  bitmexArchive,
  kucoinArchive,
  gateArchive,
];

export function findArchiveSource(venue: string): ArchiveSource | undefined {
  return archiveSources.find((s) => s.venue === venue);
}
