// What a reader's query may touch, decided on ClickHouse's own parse of it (formatQuery and EXPLAIN
// AST), never on the raw text: quoting, case, aliases, subqueries, CTEs, UNIONs and views all come
// out of the parser as the tables and functions they name. readonly=1 (readerSession.ts) refuses
// writes, DDL, SYSTEM and most table functions; this refuses what readonly lets through: the tables
// that hold secrets (directly or through a view), table functions that reach other tables, files
// or the network, the file() and dictionary functions, and system tables beyond the catalog ones.
import { ClickHouseError } from './clickhouseError.ts';

/** Tables that hold secrets, in the service's database: api_keys (hashes of the API keys). */
export const secretTables: readonly string[] = ['api_keys'];

/** Table functions that read only what the query gives them (view() is walked like a subquery). */
const allowedTableFunctions = new Set(['numbers', 'numbers_mt', 'zeros', 'zeros_mt', 'values', 'generaterandom', 'generate_series', 'generateseries', 'view', 'null']);

/** Scalar functions that read files, dictionaries (which may have any source) or a Join table by name. */
const refusedFunction = (name: string) => /^(file|joinget|joingetornull|dict[a-z]*|catboostevaluate|naivebayesclassifier)$/.test(name);

/** The catalog part of `system`: what clients list databases, tables, columns and functions with, and part sizes. */
const allowedSystemTables = new Set([
  'one', 'numbers', 'numbers_mt', 'zeros', 'zeros_mt', 'databases', 'tables', 'columns', 'functions', 'table_functions', 'formats', 'data_type_families',
  'settings', 'build_options', 'table_engines', 'time_zones', 'collations', 'keywords', 'aggregate_function_combinators', 'merge_tree_settings',
  'parts', 'parts_columns', 'data_skipping_indices', 'projections', 'contributors', 'licenses', 'metrics', 'events', 'asynchronous_metrics',
]);

/** One line of EXPLAIN AST: its depth (indent), node kind and the rest of the line. */
interface AstNode {
  depth: number;
  kind: string;
  text: string;
}

/** How the guard asks the engine: a bound query on the reader's own session, answered as rows. */
export type AskEngine = <T>(sql: string, params?: Record<string, unknown>) => Promise<T[]>;

export interface CheckedQuery {
  /** The query as ClickHouse formats it: what was checked is what runs. */
  sql: string;
  /** Its FORMAT clause, if it has one. */
  format?: string;
}

/** Parses EXPLAIN AST's indented lines (one space a level). */
export function parseAst(lines: readonly string[]): AstNode[] {
  return lines.map((line) => {
    const depth = line.length - line.trimStart().length;
    const [kind = '', ...rest] = line.trim().split(' ');
    const text = rest.join(' ').replace(/\s*\((alias [^)]*|children \d+)\)/g, '').trim();
    return { depth, kind, text };
  });
}

/** A name as the parser printed it: `db.table` or `table` (a column `alias.col` looks the same; see tableOf). */
const partsOf = (name: string) => name.split('.').filter(Boolean);

/** What the walk looks names up in, read once per query: the views (with their SELECT) and the databases. */
interface Catalog {
  views: Map<string, string>;
  databases: Set<string>;
}

export class QueryGuard {
  private readonly database: string;
  private readonly user: string;
  constructor(options: { database: string; user: string }) {
    this.database = options.database;
    this.user = options.user;
  }

  /** Refuses the query with ClickHouse's ACCESS_DENIED, or returns it as the engine formats it. */
  async check(query: string, params: Record<string, unknown>, ask: AskEngine): Promise<CheckedQuery> {
    const [formatted] = await ask<{ sql: string }>('SELECT formatQuery({query:String}) AS sql', { query });
    const sql = formatted!.sql;
    const views = await ask<{ database: string; name: string; as_select: string }>("SELECT database, name, as_select FROM system.tables WHERE engine IN ('View', 'MaterializedView')");
    const databases = await ask<{ name: string }>('SELECT name FROM system.databases');
    const catalog: Catalog = { views: new Map(views.map((v) => [`${v.database}.${v.name}`, v.as_select])), databases: new Set(databases.map((d) => d.name)) };
    await this.walk(sql, params, ask, catalog, new Set());
    const format = /\nFORMAT (\w+)$/.exec(sql)?.[1];
    return { sql, format };
  }

  private denied(what: string): ClickHouseError {
    return ClickHouseError.of('ACCESS_DENIED', `${this.user}: Not enough privileges. To execute this query, it's necessary to have the grant ${what}`);
  }

  /** Checks every table, table function and function one statement names, and the views it reads, once each. */
  private async walk(sql: string, params: Record<string, unknown>, ask: AskEngine, catalog: Catalog, seenViews: Set<string>, database = this.database): Promise<void> {
    // `sql` is one statement as formatQuery printed it (it refuses multi-statements), so EXPLAIN AST runs nothing else.
    const lines = await ask<{ explain: string }>(`EXPLAIN AST ${sql}`, params);
    const nodes = parseAst(lines.map((l) => l.explain));
    // formatQuery leaves an INSERT's inline data out, and the engine would then complain of the missing data before readonly refused it.
    if (nodes[0]?.kind === 'InsertQuery') throw ClickHouseError.of('READONLY', `${this.user}: Cannot execute query in readonly mode`);
    const tables: { database: string; table: string; certain: boolean }[] = [];
    nodes.forEach((node, i) => {
      if (node.kind === 'Function') {
        const name = node.text.toLowerCase();
        const parent = nodes.slice(0, i).reverse().find((n) => n.depth < node.depth);
        if (parent?.kind === 'TableExpression' && !allowedTableFunctions.has(name)) throw this.denied(`CREATE TEMPORARY TABLE ON *.* (the table function ${node.text} is not available to ${this.user})`);
        if (refusedFunction(name)) throw this.denied(`${node.text.toUpperCase()} ON *.* (the function ${node.text} is not available to ${this.user})`);
      }
      if (node.kind === 'TableIdentifier' || node.kind === 'Identifier') {
        const parts = partsOf(node.text);
        if (parts.some((p) => secretTables.includes(p))) throw this.denied(`SELECT ON ${this.database}.${parts.at(-1)}`);
        const [first, second] = parts;
        // A plain identifier may name a table too (`x IN table`): it is checked as one where a table has its name.
        if (parts.length >= 2) tables.push({ database: first!, table: second!, certain: node.kind === 'TableIdentifier' });
        else tables.push({ database, table: first!, certain: node.kind === 'TableIdentifier' });
      }
    });
    for (const table of tables) await this.checkTable(table, params, ask, catalog, seenViews);
  }

  /** A table named by database: the reader's database (its views walked), information_schema (views over the catalog), the catalog part of system. */
  private async checkTable(t: { database: string; table: string; certain: boolean }, params: Record<string, unknown>, ask: AskEngine, catalog: Catalog, seenViews: Set<string>): Promise<void> {
    const db = t.database;
    // `a.b` as a plain identifier is a column of alias `a` unless `a` is a database.
    if (!t.certain && !catalog.databases.has(db)) return;
    if (db === 'system') {
      if (!allowedSystemTables.has(t.table)) throw this.denied(`SELECT ON system.${t.table}`);
      return;
    }
    if (db !== this.database && db.toLowerCase() !== 'information_schema') throw this.denied(`SELECT ON ${db}.${t.table}`);
    const key = `${db}.${t.table}`;
    const view = catalog.views.get(key);
    if (view === undefined || seenViews.has(key)) return;
    seenViews.add(key);
    await this.walk(view, {}, ask, catalog, seenViews, db);
  }
}
