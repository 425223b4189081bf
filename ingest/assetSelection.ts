// `ingest --assets top100` or `--assets bitcoin,ethereum`: the catalog assets whose markets the
// collectors follow. The catalog (infra/catalog/assets.json) is in market-cap order, so the top N
// are its first N entries.
import { catalogAssets } from '../infra/catalog/catalog.ts';
import { ConfigError } from '../infra/config.ts';

const topN = /^top(\d+)$/;

/** The asset ids `--assets` names; undefined (every catalog asset) when unset. A name not in the catalog is a ConfigError. */
export function selectAssets(list: string | undefined, assets = catalogAssets): ReadonlySet<string> | undefined {
  const text = list?.trim();
  if (!text) return undefined;
  const top = topN.exec(text);
  if (top) {
    const n = Number(top[1]);
    if (n < 1) throw new ConfigError(`--assets: ${text}: N must be at least 1`);
    return new Set(assets.slice(0, n).map((a) => a.id));
  }
  const ids = text.split(',').map((id) => id.trim()).filter(Boolean);
  const known = new Set(assets.map((a) => a.id));
  const unknownIds = ids.filter((id) => !known.has(id));
  if (unknownIds.length > 0) throw new ConfigError(`--assets: not in the asset catalog: ${unknownIds.join(', ')}; use catalog ids (bitcoin,ethereum) or topN (top100)`);
  return new Set(ids);
}
