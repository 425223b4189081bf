// What the simulator's universe (issue 25: thousands of SIMULATED assets, about 7,000 markets) costs
// the simulator: its process's CPU and RSS serving every venue, next to the simulator without it
// (measured in the same run), with no client, then with one websocket client subscribed to trades
// and books of every market of Gate (the venue that lists the most of them); last, the universe
// alone (no catalog ticker listed).
// Usage: node test/bench/universe.bench.ts [seconds per phase]   (default 30)
// (`--serve '<options JSON>'` is the child it starts: a simulator, its Gate endpoints on stdout.)
import { execFileSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import WebSocket from 'ws';
import { startSimulator, type SimulatorOptions } from '../../simulator/simulator.ts';
import { stopChild } from '../support/stopChild.ts';
import { spawnReporting } from './reportingChild.ts';

async function serve(options: SimulatorOptions): Promise<void> {
  const sim = await startSimulator(options);
  const markets = sim.venues.reduce((n, v) => n + sim.venue(v).listing.markets.length, 0);
  console.log(JSON.stringify({ gate: sim.endpoints('gate'), markets }));
  const stop = () => void sim.close().then(() => process.exit(0));
  process.once('SIGTERM', stop);
  // The bench holds our stdin: should it die, so do we.
  process.stdin.once('end', stop).resume();
}

const ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim());

/** User + system CPU seconds of a process so far, from /proc (Linux). */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond;
}

const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

async function start(options: SimulatorOptions): Promise<{ child: ChildProcess; gate: { ws: string; rest: string }; markets: number }> {
  const { child, report } = await spawnReporting<{ gate: { ws: string; rest: string }; markets: number }>([process.argv[1]!, '--serve', JSON.stringify(options)], 'the simulator', 'pipe');
  return { child, ...report };
}

/** One websocket on Gate subscribed to trades and 50-level books of every pair it lists; counts the frames. */
async function subscribeAll(gate: { ws: string; rest: string }): Promise<{ frames: () => number; pairs: number; close: () => void }> {
  const pairs = ((await (await fetch(`${gate.rest}/api/v4/spot/currency_pairs`)).json()) as { id: string }[]).map((p) => p.id);
  const socket = new WebSocket(gate.ws);
  let frames = 0;
  socket.on('message', () => void frames++);
  await new Promise((r) => socket.once('open', r));
  socket.send(JSON.stringify({ time: 0, channel: 'spot.trades', event: 'subscribe', payload: pairs }));
  socket.send(JSON.stringify({ time: 0, channel: 'spot.obu', event: 'subscribe', payload: pairs.map((p) => `ob.${p}.50`) }));
  return { frames: () => frames, pairs: pairs.length, close: () => socket.terminate() };
}

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function phase(name: string, options: SimulatorOptions, seconds: number, withClient: boolean): Promise<void> {
  const { child, gate, markets } = await start(options);
  const client = withClient ? await subscribeAll(gate) : undefined;
  await wait(5_000);
  const [cpu0, frames0, t0] = [cpuSeconds(child.pid!), client?.frames() ?? 0, performance.now()];
  await wait(seconds * 1_000);
  const elapsed = (performance.now() - t0) / 1_000;
  const cpu = ((cpuSeconds(child.pid!) - cpu0) / elapsed) * 100;
  const rss = rssMb(child.pid!);
  const frames = ((client?.frames() ?? 0) - frames0) / elapsed;
  client?.close();
  await stopChild(child);
  const clientText = client ? `, one client on ${client.pairs} Gate pairs: ${frames.toFixed(0)} frames/s` : '';
  console.log(`${name.padEnd(28)} ${String(markets).padStart(5)} markets  CPU ${cpu.toFixed(1).padStart(5)}%  RSS ${rss.toFixed(0).padStart(4)} MB${clientText}`);
}

async function main(seconds: number): Promise<void> {
  console.log(`simulator process, every venue, ${seconds} s per phase after 5 s of warm-up (2-core shared machine: compare rows of one run)`);
  await phase('without the universe', { seed: 1 }, seconds, false);
  await phase('with the universe', { seed: 1, universe: {} }, seconds, false);
  await phase('without the universe', { seed: 1 }, seconds, true);
  await phase('with the universe', { seed: 1, universe: {} }, seconds, true);
  // The universe's own cost: no catalog ticker listed (a venue's one cross pair stays).
  await phase('the universe alone', { seed: 1, tickers: [], universe: {} }, seconds, false);
}

if (process.argv[2] === '--serve') await serve(JSON.parse(process.argv[3]!) as SimulatorOptions);
else await main(Number(process.argv[2] ?? 30));
