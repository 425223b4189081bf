// Writes the SIMULATED ETF flow files of the demo (infra/reference/etf-flows-demo/btc.csv, eth.csv, sol.csv).
// The numbers are random, of a plausible size and sign; they are not fund disclosures. Run:
//   node simulator/etfFlowsDemo.ts
// Same seed, same files: the output is committed and only changes when this script does.
import { writeFileSync } from 'node:fs';
import { etfAssetId, etfFundsOf, type EtfAssetId } from '../infra/reference/etfFunds.ts';
import { seededRandom } from './market.ts';

const seed = 20261122;
const lastDay = '2026-11-20';

// NYSE full-day closures 2024-2026, so the demo has real holiday gaps (a demo calendar, not a reference).
const holidays = new Set([
  '2024-01-01', '2024-01-15', '2024-02-19', '2024-03-29', '2024-05-27', '2024-06-19', '2024-07-04', '2024-09-02', '2024-11-28', '2024-12-25',
  '2025-01-01', '2025-01-09', '2025-01-20', '2025-02-17', '2025-04-18', '2025-05-26', '2025-06-19', '2025-07-04', '2025-09-01', '2025-11-27', '2025-12-25',
  '2026-01-01', '2026-01-19', '2026-02-16', '2026-04-03', '2026-05-25', '2026-06-19', '2026-07-03', '2026-09-07', '2026-11-26', '2026-12-25',
]);

/** Typical size of a day's flow (USD) and its drift, per fund: big funds move more, converted trusts bleed. */
const profile: Record<string, { scale: number; drift: number }> = {
  IBIT: { scale: 250e6, drift: 0.35 }, FBTC: { scale: 80e6, drift: 0.2 }, BITB: { scale: 20e6, drift: 0.15 },
  ARKB: { scale: 25e6, drift: 0.1 }, BTCO: { scale: 5e6, drift: 0.05 }, EZBC: { scale: 5e6, drift: 0.05 },
  BRRR: { scale: 3e6, drift: 0.05 }, HODL: { scale: 8e6, drift: 0.1 }, BTCW: { scale: 2e6, drift: 0 },
  GBTC: { scale: 60e6, drift: -0.6 }, BTC: { scale: 10e6, drift: 0.15 },
  ETHA: { scale: 60e6, drift: 0.3 }, FETH: { scale: 20e6, drift: 0.15 }, ETHW: { scale: 5e6, drift: 0.05 },
  CETH: { scale: 2e6, drift: 0 }, ETHV: { scale: 3e6, drift: 0.05 }, QETH: { scale: 1e6, drift: 0 },
  EZET: { scale: 1e6, drift: 0 }, ETHE: { scale: 20e6, drift: -0.6 }, ETH: { scale: 8e6, drift: 0.1 },
  BSOL: { scale: 15e6, drift: 0.3 }, GSOL: { scale: 5e6, drift: 0.1 }, VSOL: { scale: 2e6, drift: 0.05 },
  FSOL: { scale: 3e6, drift: 0.1 }, TSOL: { scale: 1e6, drift: 0 }, SOEZ: { scale: 0.5e6, drift: 0 }, SSK: { scale: 1e6, drift: 0 },
};


function tradingDays(from: string, to: string): string[] {
  const days: string[] = [];
  for (let t = Date.parse(`${from}T00:00:00Z`); t <= Date.parse(`${to}T00:00:00Z`); t += 86_400_000) {
    const d = new Date(t);
    const iso = d.toISOString().slice(0, 10);
    if (d.getUTCDay() !== 0 && d.getUTCDay() !== 6 && !holidays.has(iso)) days.push(iso);
  }
  return days;
}

function simulate(asset: EtfAssetId, next: () => number): string {
  const funds = etfFundsOf(asset);
  const normal = () => Math.sqrt(-2 * Math.log(1 - next())) * Math.cos(2 * Math.PI * next());
  const lines = [
    `# SIMULATED DEMO DATA, not fund disclosures: random flows of a plausible size, written by simulator/etfFlowsDemo.ts (seed ${seed}).`,
    '# source: SIMULATED demo data (simulator/etfFlowsDemo.ts)',
    '# simulated: true',
    'date,fund,flow_usd',
  ];
  const days = tradingDays(funds.map((f) => f.launchDate).sort()[0]!, lastDay);
  let mood = 0;
  for (const [i, day] of days.entries()) {
    // Flows of one asset move together: a slowly wandering market mood shared by its funds.
    mood = 0.8 * mood + 0.45 * normal();
    for (const fund of funds) {
      if (day < fund.launchDate) continue;
      const { scale, drift } = profile[fund.ticker]!;
      const small = scale < 10e6;
      // Late or missing reports: no row, never a zero. Small funds are late on the newest day.
      if (next() < 0.01 || (small && i === days.length - 1 && next() < 0.5)) continue;
      // Small funds often see no creation or redemption at all: a reported zero.
      if (next() < (small ? 0.6 : 0.15)) {
        lines.push(`${day},${fund.ticker},0`);
        continue;
      }
      // Farside-like precision: USD 0.1 million.
      const flow = Math.round((scale * (drift + mood + 0.6 * normal())) / 1e5) * 1e5;
      lines.push(`${day},${fund.ticker},${flow}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

const next = seededRandom(seed);
for (const asset of etfAssetId.options) {
  writeFileSync(new URL(`../../infra/reference/etf-flows-demo/${asset}.csv`, import.meta.url), simulate(asset, next));
}
