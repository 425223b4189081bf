// How many websocket connections a venue lets one address open in a window (Bitfinex: 20 a minute),
// shared by every socket of the venue's collectors in a process: at start, a venue with many markets
// opens many sockets at once, and after an outage they all reconnect together. Past the budget a
// venue refuses or bans the address; here the next connection waits for its turn instead. A turn
// whose connection never reached the venue (refused, unreachable) is given back: it counted nothing
// there, and an outage's retries would otherwise use up the budget the reconnect needs.

/** A venue's documented limit on new connections: at most `connections` in any `windowMs`. */
export interface ConnectLimit {
  connections: number;
  windowMs: number;
  /** Who shares it: venue ids that reach the same servers (Bitfinex's spot and derivatives) name the same scope. */
  scope: string;
}

/** A connection's turn: how long it waited, and how to give it back when the venue never saw it. */
export interface ConnectTurn {
  waitedMs: number;
  giveBack(): void;
}

export interface BudgetClock {
  now(): number;
  /** Resolves after `ms`. */
  sleep(ms: number): Promise<void>;
}

const realClock: BudgetClock = { now: () => Date.now(), sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms).unref()) };

/**
 * A sliding window: a connection may open when fewer than `connections` opened in the `windowMs`
 * before it. Turns are given in the order asked for.
 */
export class ConnectBudget {
  readonly #limit: Pick<ConnectLimit, 'connections' | 'windowMs'>;
  readonly #clock: BudgetClock;
  /** When the last turns (at most `connections`) were given, oldest first. */
  readonly #given: number[] = [];
  /** The turn asked for last: each waits for the one before it. */
  #queue: Promise<unknown> = Promise.resolve();
  #waiting = 0;

  constructor(limit: Pick<ConnectLimit, 'connections' | 'windowMs'>, clock: BudgetClock = realClock) {
    if (!(limit.connections >= 1) || !(limit.windowMs > 0)) throw new Error(`a connection limit needs at least 1 connection in a window above 0 ms: ${JSON.stringify(limit)}`);
    this.#limit = limit;
    this.#clock = clock;
  }

  /** Connections waiting for their turn now. */
  get waiting(): number {
    return this.#waiting;
  }

  /** Resolves when the caller may open its connection. */
  take(): Promise<ConnectTurn> {
    const asked = this.#clock.now();
    this.#waiting += 1;
    const turn = this.#queue.then(() => this.#next(asked));
    this.#queue = turn;
    return turn;
  }

  async #next(asked: number): Promise<ConnectTurn> {
    const { connections, windowMs } = this.#limit;
    if (this.#given.length === connections) {
      // The oldest of the last `connections` turns leaves the window `windowMs` after it was given.
      const wait = this.#given[0]! + windowMs - this.#clock.now();
      if (wait > 0) await this.#clock.sleep(wait);
      this.#given.shift();
    }
    const at = this.#clock.now();
    this.#given.push(at);
    this.#waiting -= 1;
    let kept = true;
    const giveBack = () => {
      if (!kept) return;
      kept = false;
      const i = this.#given.indexOf(at);
      if (i >= 0) this.#given.splice(i, 1);
    };
    return { waitedMs: at - asked, giveBack };
  }
}

const budgets = new Map<string, ConnectBudget>();

/** The process's one budget of a scope: every collector of it in this process takes its turns there. */
export function connectBudgetOf(limit: ConnectLimit): ConnectBudget {
  let budget = budgets.get(limit.scope);
  if (!budget) budgets.set(limit.scope, (budget = new ConnectBudget(limit)));
  return budget;
}
