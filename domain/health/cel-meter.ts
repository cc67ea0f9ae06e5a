/**
 * The cost meter of CEL health checks: Kubernetes bounds each CEL expression
 * by a cost budget; cel-js has no cost hook, so the runtime (cel-runtime.ts)
 * routes every AST node evaluation of its own Environment through
 * `meteredRun`, which charges
 * - 1 unit per node evaluated (so each comprehension iteration costs its body),
 * - 1 unit per 10 characters (or bytes) of every string (or bytes) produced,
 * - 1 unit per element of every list produced,
 * plus what a function charges itself (a regex match: its input's size × its
 * program size), and stops the evaluation once the budget or its wall-clock
 * deadline is passed. The deadline is checked cooperatively: after every call
 * and comparison (the steps whose own work is not counted) and every 16 steps.
 *
 * A stopped evaluation is over budget whatever it returns: CEL's `||` and `&&`
 * absorb errors, and `all`/`exists` keep iterating after one, so the verdict
 * reads the meter, never the value.
 */

export type Exceeded = 'cost' | 'time';

/** Thrown through cel-js to stop an evaluation; one instance per meter (throwing it again is cheap). */
export class BudgetExceededError extends Error {
  readonly exceeded: Exceeded;
  constructor(exceeded: Exceeded) {
    super(exceeded === 'cost' ? 'cost budget exceeded' : 'time bound exceeded');
    this.name = 'BudgetExceededError';
    this.exceeded = exceeded;
  }
}

export class Meter {
  cost = 0;
  exceeded: Exceeded | undefined;
  #steps = 0;
  #stop: BudgetExceededError | undefined;
  readonly costLimit: number;
  readonly deadline: number;
  readonly #now: () => number;

  constructor(costLimit: number, deadline: number, now: () => number) {
    this.costLimit = costLimit;
    this.deadline = deadline;
    this.#now = now;
  }

  /** Adds `units`; throws once over budget. */
  charge(units: number): void {
    this.cost += units;
    if (this.cost > this.costLimit) this.stop('cost');
  }

  /** Counts one step; checks the clock when `heavy` or every 16 steps. Throws once past the deadline. */
  step(heavy: boolean): void {
    if ((++this.#steps & 15) !== 0 && !heavy) return;
    if (this.#now() > this.deadline) this.stop('time');
  }

  /** Throws the meter's stop error (again, once stopped). */
  stop(exceeded: Exceeded): never {
    this.exceeded ??= exceeded;
    this.#stop ??= new BudgetExceededError(this.exceeded);
    throw this.#stop;
  }
}

/** The meter of the evaluation under way, if any: one slot per runtime (evaluation is synchronous). */
export interface MeterSlot {
  active: Meter | undefined;
}

/** Steps whose work is not made of metered steps: checked against the clock at once. */
const HEAVY_OPS: ReadonlySet<string> = new Set([
  'call',
  'rcall',
  '==',
  '!=',
  'in',
  '+',
  '<',
  '<=',
  '>',
  '>=',
]);

function valueCost(value: unknown): number {
  if (typeof value === 'string') return Math.ceil(value.length / 10);
  if (Array.isArray(value)) return value.length;
  if (value instanceof Uint8Array) return Math.ceil(value.length / 10);
  return 0;
}

interface EvaluatorLike {
  run(ast: unknown, ctx: unknown): unknown;
}

function isEvaluator(value: unknown): value is EvaluatorLike {
  return (
    typeof value === 'object' && value !== null && typeof (value as { run?: unknown }).run === 'function'
  );
}

/**
 * Installs metering on the evaluator of one Environment (captured from a
 * function handler's `this`, which cel-js sets to its evaluator). Outside a
 * metered evaluation (`slot.active` unset) nodes run as before.
 */
export function installMeter(evaluator: unknown, slot: MeterSlot): void {
  if (!isEvaluator(evaluator)) {
    throw new Error(
      'cel-js evaluator not found: CEL health checks cannot be metered with this @marcbachmann/cel-js version',
    );
  }
  const base = evaluator.run.bind(evaluator);
  Object.defineProperty(evaluator, 'run', {
    configurable: false,
    writable: false,
    value: function meteredRun(ast: { op?: unknown }, ctx: unknown): unknown {
      const meter = slot.active;
      if (meter === undefined) return base(ast, ctx);
      if (meter.exceeded !== undefined) meter.stop(meter.exceeded);
      meter.charge(1);
      const value = base(ast, ctx);
      meter.charge(valueCost(value));
      meter.step(typeof ast.op === 'string' && HEAVY_OPS.has(ast.op));
      return value;
    },
  });
}
