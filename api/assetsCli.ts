// `npm run assets`: the discovered assets an operator should look at, from a running service's
// /status/assets.json (api/status/assetIdentity.ts). Read-only: curating means mapping the venue
// ticker in the catalog (infra/catalog/CATALOG.md, "Discovered assets").
import { parseArgs } from 'node:util';
import { answerHelpAndVersion } from '../infra/cli.ts';
import { loadConfig } from '../infra/config.ts';
import type { AssetIdentityResponse } from './status/assetIdentity.ts';

const usage = `usage: npm run assets -- [--all] [--json] [--url <base>]
  Lists the discovered assets (found in a venue's listing, not in the catalog) that share their
  ticker with another asset, and whether their prices agree within the bound.
  --all         every discovered asset, the distinct ones too
  --json        the report as the service serves it
  --url <base>  the service (default http://127.0.0.1:<PORT>)
  --help, -h    this text
  --version     the service's version`;

const percent = (x: number | null) => (x === null ? '-' : `${(x * 100).toFixed(2)}%`);
const price = (x: number | null) => (x === null ? 'no price' : `$${x.toPrecision(6)}`);

/** The report as lines of text: counts, then one line per asset and one per candidate. */
export function reportLines(report: AssetIdentityResponse, all: boolean): string[] {
  const { counts } = report;
  const lines = [
    `${counts.discovered} discovered assets: ${counts.ambiguous} ambiguous, ${counts.apart} apart, ${counts.distinct} distinct (prices differing by more than ${percent(report.bound)} are not one asset)`,
  ];
  for (const row of report.assets) {
    if (!all && row.state === 'distinct') continue;
    const scale = row.base.scale === 1 ? '' : ` = ${row.base.scale} x ${row.base.ticker}`;
    const delisted = row.delistedOn ? `  (delisted ${row.delistedOn}: price of its last day)` : '';
    lines.push(`${row.state.padEnd(9)} ${row.id}${scale}  unit ${price(row.unitPrice)}${delisted}${row.decided ? '  (decided apart)' : ''}`);
    for (const c of row.candidates) lines.push(`            ${c.verdict.padEnd(9)} ${c.id}  unit ${price(c.unitPrice)}  off by ${percent(c.deviation)}`);
  }
  return lines;
}

async function main(argv: string[]): Promise<number> {
  answerHelpAndVersion(argv, usage);
  const { values } = parseArgs({ args: argv, options: { all: { type: 'boolean' }, json: { type: 'boolean' }, url: { type: 'string' } }, allowPositionals: false });
  const base = values.url ?? `http://127.0.0.1:${loadConfig().PORT}`;
  let res: Response;
  try {
    res = await fetch(new URL('/status/assets.json', base));
  } catch (err) {
    process.stderr.write(`npm run assets: no service answers at ${base} (${(err as Error).message}); start it, or give --url\n`);
    return 1;
  }
  if (!res.ok) {
    process.stderr.write(`npm run assets: ${base} answered ${res.status}: ${await res.text()}\n`);
    return 1;
  }
  const report = (await res.json()) as AssetIdentityResponse;
  process.stdout.write(values.json ? `${JSON.stringify(report, null, 2)}\n` : `${reportLines(report, values.all === true).join('\n')}\n`);
  return 0;
}

if (import.meta.main) process.exitCode = await main(process.argv.slice(2));
