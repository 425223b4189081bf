// What grew between two heap snapshots of one thread: each object found in both (by its snapshot
// id), with what it retains in each (its dominator subtree), the largest growth first.
//
//   node test/bench/heapGrowth.ts EARLIER.heapsnapshot LATER.heapsnapshot [--top 40]
//
// Take the snapshots of a running service with Node's own signal: start it with
// NODE_OPTIONS='--heapsnapshot-signal=SIGUSR2 --diagnostic-dir=DIR' and `kill -USR2 PID` at two
// times (the main thread only; a snapshot pauses it for seconds and raises the RSS for good, so a
// run that takes them measures no RSS target). The file is read without JSON.parse of the whole:
// a few hundred MB of it passes V8's longest string.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

/** A heap snapshot's graph: node k's fields, and its outgoing edges. */
export interface HeapGraph {
  readonly count: number;
  type(k: number): string;
  name(k: number): string;
  id(k: number): number;
  selfSize(k: number): number;
  /** Node k's edges, weak ones included (`type` 'weak'). */
  edges(k: number): { type: string; name: string | number; to: number }[];
}

interface SnapshotMeta {
  node_fields: string[];
  node_types: [string[], ...unknown[]];
  edge_fields: string[];
  edge_types: [string[], ...unknown[]];
}

/** The unsigned integers of the JSON array that starts after `marker`. */
function integersAfter(text: Buffer, marker: string): Float64Array {
  let i = text.indexOf(marker);
  if (i < 0) throw new Error(`not a heap snapshot: no ${marker}`);
  i += marker.length;
  const values: number[] = [];
  let value = 0;
  let inNumber = false;
  for (; i < text.length; i++) {
    const c = text[i]!;
    if (c >= 0x30 && c <= 0x39) {
      value = value * 10 + (c - 0x30);
      inNumber = true;
      continue;
    }
    if (inNumber) values.push(value);
    value = 0;
    inNumber = false;
    if (c === 0x5d) return Float64Array.from(values);
  }
  throw new Error(`not a heap snapshot: ${marker} is not closed`);
}

/** The JSON strings of the array that starts after `marker`. */
function stringsAfter(text: Buffer, marker: string): string[] {
  let i = text.indexOf(marker);
  if (i < 0) throw new Error(`not a heap snapshot: no ${marker}`);
  i += marker.length;
  const strings: string[] = [];
  for (;;) {
    while (i < text.length && text[i] !== 0x22 && text[i] !== 0x5d) i++;
    if (i >= text.length) throw new Error(`not a heap snapshot: ${marker} is not closed`);
    if (text[i] === 0x5d) return strings;
    let end = i + 1;
    while (text[end] !== 0x22) end += text[end] === 0x5c ? 2 : 1;
    strings.push(JSON.parse(text.toString('utf8', i, end + 1)) as string);
    i = end + 1;
  }
}

/** The graph of a .heapsnapshot file's contents (V8's format: flat arrays of numbers, then strings). */
export function readHeapSnapshot(text: Buffer): HeapGraph {
  const head = text.toString('utf8', 0, text.indexOf('"nodes":['));
  const meta = (JSON.parse(`${head.replace(/,\s*$/, '')}}`) as { snapshot: { meta: SnapshotMeta } }).snapshot.meta;
  const nodes = integersAfter(text, '"nodes":[');
  const edges = integersAfter(text, '"edges":[');
  const strings = stringsAfter(text, '"strings":[');
  const nodeWidth = meta.node_fields.length;
  const edgeWidth = meta.edge_fields.length;
  const field = (name: string) => meta.node_fields.indexOf(name);
  const [typeAt, nameAt, idAt, sizeAt, edgeCountAt] = ['type', 'name', 'id', 'self_size', 'edge_count'].map(field) as [number, number, number, number, number];
  const count = nodes.length / nodeWidth;
  const firstEdge = new Uint32Array(count + 1);
  for (let k = 0; k < count; k++) firstEdge[k + 1] = firstEdge[k]! + nodes[k * nodeWidth + edgeCountAt]!;
  const nodeTypes = meta.node_types[0];
  const edgeTypes = meta.edge_types[0];
  return {
    count,
    type: (k) => nodeTypes[nodes[k * nodeWidth + typeAt]!]!,
    name: (k) => strings[nodes[k * nodeWidth + nameAt]!]!,
    id: (k) => nodes[k * nodeWidth + idAt]!,
    selfSize: (k) => nodes[k * nodeWidth + sizeAt]!,
    edges(k) {
      const out = [];
      for (let e = firstEdge[k]!; e < firstEdge[k + 1]!; e++) {
        const type = edgeTypes[edges[e * edgeWidth]!]!;
        const nameOrIndex = edges[e * edgeWidth + 1]!;
        // Element and hidden edges carry an index, the others a string.
        out.push({ type, name: type === 'element' || type === 'hidden' ? nameOrIndex : strings[nameOrIndex]!, to: edges[e * edgeWidth + 2]! / nodeWidth });
      }
      return out;
    },
  };
}

/**
 * Each node's immediate dominator and retained size (its own size and that of every node reachable
 * only through it), from node 0, the snapshot's root, over the strong edges. The iterative
 * algorithm of Cooper, Harvey and Kennedy ("A Simple, Fast Dominance Algorithm", 2001). A node the
 * root does not reach has dominator -1 and retains nothing.
 */
export function retainedSizes(graph: HeapGraph): { dominator: Int32Array; retained: Float64Array } {
  const n = graph.count;
  // The strong edges as one array, node k's from outStart[k] to outStart[k + 1]: millions of them.
  const outStart = new Uint32Array(n + 1);
  const targets: number[] = [];
  for (let k = 0; k < n; k++) {
    for (const e of graph.edges(k)) if (e.type !== 'weak') targets.push(e.to);
    outStart[k + 1] = targets.length;
  }
  const out = Uint32Array.from(targets);
  // Post-order from the root, without recursion (a heap's paths run deeper than the call stack).
  const postIndex = new Int32Array(n).fill(-1);
  const postOrder = new Uint32Array(n);
  let reached = 0;
  const stack = new Uint32Array(n);
  const nextEdge = new Uint32Array(n);
  const seen = new Uint8Array(n);
  let depth = 0;
  stack[depth++] = 0;
  seen[0] = 1;
  nextEdge[0] = outStart[0]!;
  while (depth > 0) {
    const node = stack[depth - 1]!;
    if (nextEdge[node]! < outStart[node + 1]!) {
      const to = out[nextEdge[node]!++]!;
      if (!seen[to]) {
        seen[to] = 1;
        nextEdge[to] = outStart[to]!;
        stack[depth++] = to;
      }
    } else {
      depth--;
      postIndex[node] = reached;
      postOrder[reached++] = node;
    }
  }
  // The predecessors the same way, of reached nodes only.
  const inStart = new Uint32Array(n + 1);
  for (let i = 0; i < reached; i++) for (let e = outStart[postOrder[i]!]!; e < outStart[postOrder[i]! + 1]!; e++) inStart[out[e]! + 1]!++;
  for (let k = 0; k < n; k++) inStart[k + 1]! += inStart[k]!;
  const sources = new Uint32Array(inStart[n]!);
  const filled = inStart.slice();
  for (let i = 0; i < reached; i++) {
    const from = postOrder[i]!;
    for (let e = outStart[from]!; e < outStart[from + 1]!; e++) sources[filled[out[e]!]!++] = from;
  }
  const dominator = new Int32Array(n).fill(-1);
  dominator[0] = 0;
  const intersect = (a: number, b: number) => {
    while (a !== b) {
      while (postIndex[a]! < postIndex[b]!) a = dominator[a]!;
      while (postIndex[b]! < postIndex[a]!) b = dominator[b]!;
    }
    return a;
  };
  for (let changed = true; changed; ) {
    changed = false;
    // Reverse post-order, the root (last in post-order) excepted.
    for (let i = reached - 2; i >= 0; i--) {
      const node = postOrder[i]!;
      let candidate = -1;
      for (let e = inStart[node]!; e < inStart[node + 1]!; e++) {
        const p = sources[e]!;
        if (dominator[p] !== -1) candidate = candidate === -1 ? p : intersect(p, candidate);
      }
      if (candidate !== dominator[node]) {
        dominator[node] = candidate;
        changed = true;
      }
    }
  }
  const retained = new Float64Array(n);
  for (let i = 0; i < reached; i++) {
    const node = postOrder[i]!;
    retained[node]! += graph.selfSize(node);
    if (node !== 0) retained[dominator[node]!]! += retained[node]!;
  }
  return { dominator, retained };
}

/** One object found in both snapshots, with what it retained in each. */
export interface Growth {
  /** `type:name#id` of the object, and of its dominator in the later snapshot, with the edge between them ('' where the dominator holds it through others). */
  object: string;
  heldBy: string;
  edge: string;
  before: number;
  after: number;
}

/**
 * The heap reachable from the root in each snapshot, and the objects of `later` found in `earlier`
 * (by id) whose retained size grew by `minBytes` or more, largest growth first.
 */
export function retainedGrowth(earlier: HeapGraph, later: HeapGraph, minBytes = 100_000): { reachable: { before: number; after: number }; grown: Growth[] } {
  const before = retainedSizes(earlier).retained;
  const retainedById = new Map<number, number>();
  for (let k = 0; k < earlier.count; k++) retainedById.set(earlier.id(k), before[k]!);
  const { dominator, retained } = retainedSizes(later);
  const label = (k: number) => `${later.type(k)}:${later.name(k).slice(0, 60)}#${later.id(k)}`;
  const grown: Growth[] = [];
  for (let k = 0; k < later.count; k++) {
    const was = retainedById.get(later.id(k));
    // The root (node 0) is the whole heap, printed apart.
    if (k === 0 || was === undefined || retained[k]! - was < minBytes || dominator[k] === -1) continue;
    const holder = dominator[k]!;
    const edge = later.edges(holder).find((e) => e.to === k)?.name ?? '';
    grown.push({ object: label(k), heldBy: label(holder), edge: String(edge), before: was, after: retained[k]! });
  }
  grown.sort((a, b) => b.after - b.before - (a.after - a.before));
  return { reachable: { before: before[0]!, after: retained[0]! }, grown };
}

if (import.meta.main) {
  const { positionals, values } = parseArgs({ allowPositionals: true, options: { top: { type: 'string', default: '40' } } });
  if (positionals.length !== 2) {
    console.error('usage: node test/bench/heapGrowth.ts EARLIER.heapsnapshot LATER.heapsnapshot [--top 40]');
    process.exit(2);
  }
  const [earlier, later] = positionals.map((file) => readHeapSnapshot(readFileSync(file))) as [HeapGraph, HeapGraph];
  const mb = (bytes: number) => (bytes / 1e6).toFixed(2);
  const { reachable, grown } = retainedGrowth(earlier, later);
  console.log(`heap reachable: ${mb(reachable.before)} MB, then ${mb(reachable.after)} MB`);
  for (const g of grown.slice(0, Number(values.top))) {
    console.log(`${mb(g.after - g.before).padStart(8)} MB (${mb(g.before)} -> ${mb(g.after)})  ${g.object}  held by ${g.heldBy}${g.edge === '' ? '' : ` .${g.edge}`}`);
  }
}
