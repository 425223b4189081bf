// heapGrowth.ts on small snapshots written by hand in V8's format, their retained sizes worked by hand.
import { describe, expect, it } from 'vitest';
import { readHeapSnapshot, retainedGrowth, retainedSizes } from './heapGrowth.ts';

interface HandNode {
  type: 'synthetic' | 'object' | 'string';
  name: string;
  id: number;
  size: number;
  edges: { type: 'property' | 'element' | 'weak'; name: string | number; to: number }[];
}

const nodeFields = ['type', 'name', 'id', 'self_size', 'edge_count', 'trace_node_id', 'detachedness'];
const nodeTypes = ['hidden', 'array', 'string', 'object', 'code', 'closure', 'regexp', 'number', 'native', 'synthetic'];
const edgeTypes = ['context', 'element', 'property', 'internal', 'hidden', 'shortcut', 'weak'];

/** The text of a .heapsnapshot holding `nodes`, laid out as Node writes it (a line per node and edge). */
function snapshotText(nodes: HandNode[]): Buffer {
  const strings: string[] = [];
  const stringIndex = (s: string) => (strings.includes(s) ? strings.indexOf(s) : strings.push(s) - 1);
  const nodeRows = nodes.map((n) => [nodeTypes.indexOf(n.type), stringIndex(n.name), n.id, n.size, n.edges.length, 0, 0].join(','));
  const edgeRows = nodes.flatMap((n) => n.edges.map((e) => [edgeTypes.indexOf(e.type), typeof e.name === 'number' ? e.name : stringIndex(e.name), e.to * nodeFields.length].join(',')));
  const meta = { node_fields: nodeFields, node_types: [nodeTypes, 'string', 'number', 'number', 'number', 'number', 'number'], edge_fields: ['type', 'name_or_index', 'to_node'], edge_types: [edgeTypes, 'string_or_number', 'node'] };
  return Buffer.from(
    `{"snapshot":{"meta":${JSON.stringify(meta)},"node_count":${nodes.length},"edge_count":${edgeRows.length}},\n` +
      `"nodes":[${nodeRows.join('\n,')}],\n"edges":[${edgeRows.join('\n,')}],\n"trace_function_infos":[],\n"trace_tree":[],\n"samples":[],\n"locations":[],\n` +
      `"strings":[${strings.map((s) => JSON.stringify(s)).join(',\n')}]}`,
  );
}

// The root reaches A and B; both reach C, so only the root dominates C; C holds D; A holds E alone;
// F is reached by a weak edge only. Retained: D 40, C 30 + 40 = 70, E 5, A 10 + 5 = 15, B 20, F 0,
// the root 15 + 20 + 70 = 105.
const earlier: HandNode[] = [
  { type: 'synthetic', name: '', id: 1, size: 0, edges: [{ type: 'property', name: 'a', to: 1 }, { type: 'property', name: 'b', to: 2 }] },
  { type: 'object', name: 'A', id: 11, size: 10, edges: [{ type: 'property', name: 'c', to: 3 }, { type: 'property', name: 'e', to: 4 }, { type: 'weak', name: 'f', to: 5 }] },
  { type: 'object', name: 'B', id: 13, size: 20, edges: [{ type: 'element', name: 0, to: 3 }] },
  { type: 'object', name: 'C', id: 15, size: 30, edges: [{ type: 'property', name: 'd', to: 6 }] },
  { type: 'string', name: 'say "hi" \\ é', id: 17, size: 5, edges: [] },
  { type: 'object', name: 'F', id: 19, size: 7, edges: [] },
  { type: 'object', name: 'D', id: 21, size: 40, edges: [] },
];

describe('readHeapSnapshot', () => {
  it("reads each node's fields and edges, strings with escapes included", () => {
    const graph = readHeapSnapshot(snapshotText(earlier));
    expect(graph.count).toBe(7);
    expect([graph.type(4), graph.name(4), graph.id(4), graph.selfSize(4)]).toEqual(['string', 'say "hi" \\ é', 17, 5]);
    expect(graph.edges(1)).toEqual([{ type: 'property', name: 'c', to: 3 }, { type: 'property', name: 'e', to: 4 }, { type: 'weak', name: 'f', to: 5 }]);
    expect(graph.edges(2)).toEqual([{ type: 'element', name: 0, to: 3 }]);
  });
});

describe('retainedSizes', () => {
  it('gives each node its dominator and retained size; a node reached by a weak edge only retains nothing', () => {
    const { dominator, retained } = retainedSizes(readHeapSnapshot(snapshotText(earlier)));
    expect([...retained]).toEqual([105, 15, 20, 70, 5, 0, 40]);
    expect([...dominator]).toEqual([0, 0, 0, 0, 1, -1, 3]);
  });
});

describe('retainedGrowth', () => {
  it('gives the heap reachable in each, and the objects of both whose retained size grew, largest first, each with its holder', () => {
    // Later: D holds a new G (100), B a new H (60). C and D grow by 100, B by 60, A not at all.
    const later: HandNode[] = [
      ...earlier.slice(0, 2),
      { ...earlier[2]!, edges: [...earlier[2]!.edges, { type: 'property', name: 'h', to: 8 }] },
      ...earlier.slice(3, 6),
      { ...earlier[6]!, edges: [{ type: 'property', name: 'g', to: 7 }] },
      { type: 'object', name: 'G', id: 23, size: 100, edges: [] },
      { type: 'object', name: 'H', id: 25, size: 60, edges: [] },
    ];
    const { reachable, grown } = retainedGrowth(readHeapSnapshot(snapshotText(earlier)), readHeapSnapshot(snapshotText(later)), 50);
    // The whole heap: 105 before, 105 + 100 + 60 after.
    expect(reachable).toEqual({ before: 105, after: 265 });
    expect(grown).toEqual([
      { object: 'object:C#15', heldBy: 'synthetic:#1', edge: '', before: 70, after: 170 },
      { object: 'object:D#21', heldBy: 'object:C#15', edge: 'd', before: 40, after: 140 },
      { object: 'object:B#13', heldBy: 'synthetic:#1', edge: 'b', before: 20, after: 80 },
    ]);
  });
});
