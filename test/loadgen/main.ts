// The load generator as its own process, so the service it feeds gets the rest of the machine.
//   node test/loadgen/main.ts --venues binance,bybit,okx,coinbase --markets 10 --trades 4000 --books 4000
//   node test/loadgen/main.ts --rates binance=2000/1000,okx=500/500 --burst-at 60 --duration 120
// --trades / --books are per second across all venues, split evenly; --rates sets venues one by one
// (trades/books per second). Prints one JSON line once listening: {"control", "endpoints"}; then
// the counts sent per venue every 10 s, and at the end. Control over HTTP on loopback:
//   GET /sent                              SentCounts (generator.ts): totals, per venue, trades per second
//   POST /rates {"binance":{"trades":1000,"books":1000},...}
//   POST /burst {"factor":10,"seconds":30}  trades x factor for that long
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { LoadGenerator, type SentCounts, type VenueRate } from './generator.ts';
import { loadVenueFormats } from './venues/index.ts';

const usage = `usage: node test/loadgen/main.ts [--venues ${Object.keys(loadVenueFormats).join(',')}] [--markets 10]
  [--trades N --books N | --rates venue=trades/books,...] [--burst-at s --burst-seconds 30 --burst-factor 10] [--duration s] [--port 0]`;

const { values } = parseArgs({
  options: {
    venues: { type: 'string', default: Object.keys(loadVenueFormats).join(',') },
    markets: { type: 'string', default: '10' },
    trades: { type: 'string', default: '0' },
    books: { type: 'string', default: '0' },
    rates: { type: 'string' },
    'burst-at': { type: 'string' },
    'burst-seconds': { type: 'string', default: '30' },
    'burst-factor': { type: 'string', default: '10' },
    duration: { type: 'string' },
    port: { type: 'string', default: '0' },
    help: { type: 'boolean', short: 'h' },
  },
});
if (values.help) {
  console.log(usage);
  process.exit(0);
}

const venues = values.venues.split(',').map((v) => v.trim());
const even = (total: number) => total / venues.length;
const rates: Record<string, VenueRate> = Object.fromEntries(venues.map((v) => [v, { trades: even(Number(values.trades)), books: even(Number(values.books)) }]));
for (const item of values.rates?.split(',') ?? []) {
  const [venue, trades, books] = item.split(/[=/]/);
  rates[venue!] = { trades: Number(trades), books: Number(books ?? 0) };
}

const generator = await LoadGenerator.start({ venues, markets: Number(values.markets), rates });

const rateRequest = z.record(z.string(), z.object({ trades: z.number().min(0), books: z.number().min(0) }));
const burstRequest = z.object({ factor: z.number().positive(), seconds: z.number().positive() });
const readJson = async (req: IncomingMessage): Promise<unknown> => {
  let body = '';
  for await (const chunk of req) body += String(chunk);
  return JSON.parse(body);
};

const control = createServer((req, res) => {
  const reply = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  if (req.method === 'GET' && req.url === '/sent') return reply(200, generator.sent());
  if (req.method !== 'POST' || (req.url !== '/rates' && req.url !== '/burst')) return reply(404, { error: 'GET /sent, POST /rates, POST /burst' });
  readJson(req)
    .then((json) => {
      if (req.url === '/rates') generator.setRates(rateRequest.parse(json));
      else {
        const { factor, seconds } = burstRequest.parse(json);
        generator.burst(factor, seconds * 1000);
      }
      reply(200, { ok: true });
    })
    .catch((err: unknown) => reply(400, { error: String(err) }));
});
control.listen(Number(values.port), '127.0.0.1');
await new Promise((resolve) => control.once('listening', resolve));
console.log(JSON.stringify({ control: `http://127.0.0.1:${(control.address() as AddressInfo).port}`, endpoints: generator.endpoints() }));

const summary = (sent: SentCounts) =>
  `loadgen: sent ${Object.entries(sent.perVenue)
    .map(([v, c]) => `${v} ${c.trades} trades ${c.books} books`)
    .join(', ')}; ${sent.frames} frames, ${(sent.bytes / 1e6).toFixed(1)} MB, ${sent.droppedClients} slow clients dropped`;
const progress = setInterval(() => console.log(summary(generator.sent())), 10_000);

const stop = async () => {
  clearInterval(progress);
  console.log(summary(generator.sent()));
  control.close();
  await generator.close();
  process.exit(0);
};
process.once('SIGTERM', () => void stop());
process.once('SIGINT', () => void stop());
if (values['burst-at']) setTimeout(() => generator.burst(Number(values['burst-factor']), Number(values['burst-seconds']) * 1000), Number(values['burst-at']) * 1000);
if (values.duration) setTimeout(() => void stop(), Number(values.duration) * 1000);
