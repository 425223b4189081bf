// The status page's script: polls /status.json every 1.5 s and /status/candles.json every 10 s
// (both cached by the server) and redraws. No framework; text is set with textContent only.
'use strict';

const statusEveryMs = 1500;
const candlesEveryMs = 10_000;
const colors = { up: '#26a69a', down: '#ef5350', dim: '#8b97a7', line: '#263140' };

const byId = (id) => document.getElementById(id);

/** An element with a class, text and attributes. */
function el(tag, className, text, attrs) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  for (const [k, v] of Object.entries(attrs ?? {})) node.setAttribute(k, v);
  return node;
}

const usd = (price) =>
  '$' + price.toLocaleString('en-US', price >= 1000 ? { maximumFractionDigits: 2, minimumFractionDigits: 2 } : { maximumSignificantDigits: 6 });
const fixed = (n, digits) => (n === null || n === undefined ? '—' : n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }));

/** "850 ms", "12 s", "4 min", "3 h": an age or a lag. */
function age(ms) {
  if (ms === null || ms === undefined) return '—';
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  if (ms < 60_000) return `${Math.round(ms / 1000)} s`;
  if (ms < 3_600_000) return `${Math.round(ms / 60_000)} min`;
  return `${Math.round(ms / 3_600_000)} h`;
}

/** One card per asset, made once: price, change, sparkline and the candle chart. */
const cards = new Map();

function assetCard(asset) {
  let card = cards.get(asset.assetId);
  if (card) return card;
  const root = el('div', 'card', undefined, { 'data-asset': asset.assetId });
  const head = el('div', 'asset-head');
  const name = el('div', 'asset-name', asset.symbol.toUpperCase());
  name.append(el('small', '', asset.name));
  const price = el('div', 'price', '—');
  head.append(name, price);
  const sub = el('div', 'asset-head');
  const change = el('span', 'change', '');
  const flag = el('span', 'flag', 'not measured');
  sub.append(change, flag);
  const spark = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
  spark.setAttribute('class', 'sparkline');
  spark.setAttribute('viewBox', '0 0 100 40');
  spark.setAttribute('preserveAspectRatio', 'none');
  const line = document.createElementNS('http://www.w3.org/2000/svg', 'polyline');
  line.setAttribute('fill', 'none');
  line.setAttribute('stroke-width', '1.5');
  line.setAttribute('vector-effect', 'non-scaling-stroke');
  spark.append(line);
  const chartBox = el('div', 'candles');
  root.append(head, sub, spark, chartBox);
  byId('assets').append(root);
  const chart = LightweightCharts.createChart(chartBox, {
    autoSize: true,
    layout: { background: { color: 'transparent' }, textColor: colors.dim, fontSize: 11, attributionLogo: false },
    grid: { vertLines: { color: colors.line }, horzLines: { color: colors.line } },
    rightPriceScale: { borderVisible: false },
    timeScale: { borderVisible: false, timeVisible: true, secondsVisible: false },
    handleScroll: false,
    handleScale: false,
  });
  const series = chart.addSeries(LightweightCharts.CandlestickSeries, {
    upColor: colors.up, downColor: colors.down, borderVisible: false, wickUpColor: colors.up, wickDownColor: colors.down,
    // The candles' close is the last trade, refreshed every 10 s: the card's price is the live index.
    lastValueVisible: false, priceLineVisible: false,
  });
  card = { price, change, flag, line, series };
  cards.set(asset.assetId, card);
  return card;
}

function drawSparkline(line, points) {
  if (points.length < 2) return line.setAttribute('points', '');
  const prices = points.map((p) => p[1]);
  const low = Math.min(...prices);
  const span = Math.max(...prices) - low || 1;
  const t0 = points[0][0];
  const tSpan = points.at(-1)[0] - t0 || 1;
  line.setAttribute('points', points.map(([t, p]) => `${(((t - t0) / tSpan) * 100).toFixed(2)},${(38 - ((p - low) / span) * 36).toFixed(2)}`).join(' '));
  line.setAttribute('stroke', prices.at(-1) >= prices[0] ? colors.up : colors.down);
}

function renderAssets(assets) {
  for (const asset of assets) {
    const card = assetCard(asset);
    card.price.textContent = asset.price === null ? 'no price yet' : usd(asset.price);
    card.change.textContent = asset.change24h === null ? '' : `${asset.change24h >= 0 ? '+' : ''}${asset.change24h.toFixed(2)} % 24 h`;
    card.change.className = `change ${asset.change24h >= 0 ? 'up' : 'down'}`;
    card.flag.hidden = asset.measured || asset.price === null;
    drawSparkline(card.line, asset.sparkline);
  }
}

function tile(label, value, detail) {
  const node = el('div', 'card tile');
  node.append(el('div', 'label', label), el('div', 'value', value));
  if (detail) node.append(el('div', 'detail', detail));
  return node;
}

function renderPipeline(pipeline) {
  const lags = pipeline.busLag ?? [];
  const worst = lags.reduce((top, l) => (l.records > (top?.records ?? -1) ? l : top), undefined);
  byId('pipeline').replaceChildren(
    tile('Trades stored', `${fixed(pipeline.tradesPerSecond, 1)}/s`, 'last minute, every venue'),
    tile('Rows inserted', pipeline.insertedRowsPerSecond === null ? '—' : `${fixed(pipeline.insertedRowsPerSecond, 0)}/s`, 'this process, every table'),
    tile('Index lag', age(pipeline.indexLagMs), 'newest index second vs now'),
    tile('Bus lag', pipeline.busLag === null ? '—' : `${fixed(worst?.records ?? 0, 0)} records`, pipeline.busLag === null ? 'no bus in this process' : worst ? `largest: ${worst.group} / ${worst.topic}` : 'no consumer group yet'),
  );
  const checks = pipeline.checks ?? [];
  byId('checks').replaceChildren(
    ...(checks.length === 0 ? [el('li', 'empty', 'none reported')] : checks.map((c) => el('li', c.ok ? 'ok' : 'bad', c.ok ? c.name : `${c.name}: ${c.reason ?? 'failing'}`, { 'data-check': c.name }))),
  );
}

function cell(label, text, numeric, extra) {
  return el('td', numeric ? 'num' : '', text, { 'data-label': label, ...extra });
}

function renderVenues(venues, now) {
  const rows = venues.map((v) => {
    const p = v.process;
    const tr = el('tr', '', undefined, { 'data-venue': v.venue, 'data-state': v.state });
    tr.append(
      cell('Venue', v.venue),
      cell('State', v.state, false, { class: `state state-${v.state}` }),
      cell('Markets up', `${v.connectedMarkets}/${v.markets}`, true),
      cell('Trades/s', fixed(v.tradesPerSecond, 1), true),
      cell('Last trade', v.lastTradeAt === null ? '—' : age(now - v.lastTradeAt), true),
      cell('Gaps 24h', `${v.gaps.open} open, ${v.gaps.unrecovered} unrecovered`, true, v.gaps.unrecovered > 0 ? { class: 'num state-partial' } : {}),
      cell('Recovered 24h', String(v.gaps.recoveredTrades), true),
      cell('Msgs/s*', p ? fixed(p.messagesPerSecond, 1) : '—', true),
      cell('Last message*', p ? age(p.lastMessageAgeMs) : '—', true),
      cell('Resyncs*', p ? String(p.resyncs) : '—', true),
      cell('Buffer overflows*', p ? String(p.bookBufferOverflows) : '—', true),
      cell('Reconnects*', p ? String(p.reconnects) : '—', true),
    );
    return tr;
  });
  const empty = el('tr');
  empty.append(el('td', 'empty', 'no venue has reported a connection yet', { colspan: '12' }));
  byId('venues').tBodies[0].replaceChildren(...(rows.length ? rows : [empty]));
}

function renderExclusions(exclusions) {
  const rows = exclusions.markets.map((m) => {
    const tr = el('tr', '', undefined, { 'data-excluded': `${m.venue}:${m.market}` });
    tr.append(cell('Asset', m.asset), cell('Venue', m.venue), cell('Market', m.market), cell('Reason', m.reason));
    return tr;
  });
  const empty = el('tr');
  empty.append(el('td', 'empty', 'the index excludes no market', { colspan: '4' }));
  byId('exclusions').tBodies[0].replaceChildren(...(rows.length ? rows : [empty]));
  const more = exclusions.total - exclusions.markets.length;
  byId('exclusions-note').textContent =
    `Markets the index price leaves out, as the index runner last judged them (aggregate/METHODOLOGY.md)${more > 0 ? `; ${more} more not listed` : ''}.`;
}

function banner(text) {
  const node = byId('banner');
  node.textContent = text ?? '';
  node.classList.toggle('shown', Boolean(text));
}

async function getJson(path) {
  const res = await fetch(path, { cache: 'no-cache' });
  if (!res.ok) throw new Error(`${path} answered ${res.status}`);
  return res.json();
}

async function refreshStatus() {
  try {
    const status = await getJson('/status.json');
    byId('source').textContent = status.simulated ? 'SIMULATED market data (demo)' : '';
    byId('updated').textContent = `updated ${new Date(status.at).toLocaleTimeString()}`;
    renderAssets(status.assets);
    renderPipeline(status.pipeline);
    renderVenues(status.venues, status.at);
    renderExclusions(status.exclusions);
    banner();
  } catch (err) {
    banner(`Status unavailable, retrying: ${err.message}`);
  } finally {
    setTimeout(refreshStatus, statusEveryMs);
  }
}

async function refreshCandles() {
  try {
    const { candles } = await getJson('/status/candles.json');
    for (const [assetId, list] of Object.entries(candles)) {
      cards.get(assetId)?.series.setData(list.map((c) => ({ time: c.timestamp / 1000, open: c.open, high: c.high, low: c.low, close: c.close })));
    }
  } catch {
    // The next round tries again; the status banner already says when the service does not answer.
  } finally {
    setTimeout(refreshCandles, candlesEveryMs);
  }
}

// Candles after the first status: the cards they draw into exist by then.
refreshStatus().then(refreshCandles);
