// Parse + normalize throughput per native venue (messages/s on one core), next to bare JSON.parse
// of the same frames, measured in the same run. Frames are recorded off the simulator's websockets
// (the venue's own formats: trades, book updates, liquidations, heartbeats), then replayed from memory.
// "Normalize" = the venue's parse into our messages, then trades and liquidations into bus events
// with contracts converted to base units; book messages are parsed into level updates, not applied
// to a book (that cost depends on book depth, not on the protocol).
// Usage: node test/bench/venues.bench.ts [frames per venue]   (default 5000)
import WebSocket from 'ws';
import { selectMarkets, toLiquidationEvent, toTradeEvent } from '../../ingest/normalize.ts';
import { venueIo } from '../../ingest/venueIo.ts';
import { isSimulatedVenue, startSimulator } from '../../simulator/simulator.ts';
import type { VenueDescriptor, VenueMarket } from '../../ingest/venue.ts';
import { nativeVenues } from '../../ingest/venues/registry.ts';

const framesPerVenue = Number(process.argv[2] ?? 5_000);
const rounds = 5;
const sliceMs = 250;

async function record(venue: VenueDescriptor & { id: Parameters<typeof isSimulatedVenue>[0] }): Promise<{ frames: string[]; markets: VenueMarket[] }> {
  if (!isSimulatedVenue(venue.id)) throw new Error(`${venue.id} has no simulator`);
  // A busy market, so the frames come quickly; the formats are the venue's whatever the rate.
  const sim = await startSimulator({ venues: [venue.id], seed: 7, tickMs: 20, tradesPerSecondPerMarket: 20, liquidationsPerSecondPerMarket: 2 });
  const endpoints = sim.endpoints(venue.id);
  const { markets } = selectMarkets(venue, await venue.listMarkets(venueIo, endpoints));
  const frames: string[] = [];
  const plans = venue.sockets(endpoints, markets);
  // Venues that hand out an endpoint per connection (KuCoin's token) are asked first.
  const urls = await Promise.all(plans.map(async (plan) => (plan.connectUrl ? (await plan.connectUrl(venueIo)).url : plan.url)));
  const sockets = plans.map((plan, i) => {
    const socket = new WebSocket(urls[i]!);
    socket.on('open', () => plan.subscribe.forEach((m) => socket.send(m)));
    socket.on('message', (data) => frames.length < framesPerVenue && frames.push(data.toString()));
    return socket;
  });
  while (frames.length < framesPerVenue) await new Promise((r) => setTimeout(r, 20));
  for (const s of sockets) s.terminate();
  await sim.close();
  return { frames, markets };
}

/** Messages per second of `fn` over the frames, replayed for `ms` (after one warm-up pass). */
function rate(frames: readonly string[], fn: (frame: string) => unknown, ms: number): number {
  let sink = 0;
  for (const f of frames) if (fn(f)) sink++;
  let n = 0;
  const start = performance.now();
  while (performance.now() - start < ms) {
    for (const f of frames) if (fn(f)) sink++;
    n += frames.length;
  }
  const seconds = (performance.now() - start) / 1000;
  if (sink < 0) console.log(sink);
  return n / seconds;
}

/**
 * Both measurements in alternating slices, best slice of each: on a shared machine a slice can
 * lose the core to another process, and alternating keeps that from favouring one side.
 */
function compare(frames: readonly string[], a: (frame: string) => unknown, b: (frame: string) => unknown): [number, number] {
  let best: [number, number] = [0, 0];
  for (let round = 0; round < rounds; round++) best = [Math.max(best[0], rate(frames, a, sliceMs)), Math.max(best[1], rate(frames, b, sliceMs))];
  return best;
}

console.log(`venue parse + normalize vs JSON.parse, ${framesPerVenue} recorded frames per venue, best of ${rounds} alternating ${sliceMs} ms slices, node ${process.version}`);
console.log(['venue'.padEnd(22), 'avg frame'.padStart(10), 'JSON.parse msg/s'.padStart(17), 'parse+normalize msg/s'.padStart(22), 'ratio'.padStart(6), '  mix'].join(' '));
for (const venue of nativeVenues) {
  if (!isSimulatedVenue(venue.id)) {
    console.log(`${venue.id.padEnd(22)} (no simulator: not measured)`);
    continue;
  }
  const { frames, markets } = await record(venue as VenueDescriptor & { id: Parameters<typeof isSimulatedVenue>[0] });
  const bySymbol = new Map(markets.map((m) => [m.symbol, m]));
  // Venues whose frames need what the connection said before (Bitfinex channel ids) parse through a
  // session; the recording starts with the subscription replies that teach it.
  const session = venue.session?.();
  const parse = (frame: string) => (session ? session.parse(frame) : venue.parse(frame));
  const normalize = (frame: string) => {
    let n = 0;
    for (const m of parse(frame)) {
      if (m.kind === 'trade') {
        const market = bySymbol.get(m.symbol);
        if (market && toTradeEvent(venue.id, market, m, 0)) n++;
      } else if (m.kind === 'liquidation') {
        const market = bySymbol.get(m.symbol);
        if (market && toLiquidationEvent(venue.id, market, m, 0)) n++;
      } else n++;
    }
    return n;
  };
  const kinds = new Map<string, number>();
  for (const f of frames) for (const m of parse(f)) kinds.set(m.kind, (kinds.get(m.kind) ?? 0) + 1);
  const [baseline, ours] = compare(frames, (f) => JSON.parse(f), normalize);
  const bytes = frames.reduce((s, f) => s + f.length, 0) / frames.length;
  console.log(
    [
      venue.id.padEnd(22),
      `${Math.round(bytes)} B`.padStart(10),
      Math.round(baseline).toLocaleString('en-US').padStart(17),
      Math.round(ours).toLocaleString('en-US').padStart(22),
      (ours / baseline).toFixed(2).padStart(6),
      ` ${[...kinds].map(([k, v]) => `${k} ${v}`).join(', ')}`,
    ].join(' '),
  );
}
