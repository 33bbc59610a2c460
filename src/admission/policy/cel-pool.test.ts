/**
 * The CEL worker pool: results, deadlines (a runaway is stopped and the pool keeps serving),
 * 10,000 concurrent evaluations each with its own answer, a dead worker replaced.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { DeadlineError, WorkerError } from '../../workers/pool';
import { CelPool } from './cel-pool';

const pool = new CelPool({ size: 2, deadlineMs: 2000 });
afterAll(() => pool.close());

describe('cel pool', () => {
  test('evaluates an expression in a worker', async () => {
    await pool.ready();
    expect(await pool.evaluate('x + 1', { x: 'int' }, { x: 41 })).toEqual({ ok: true, value: 42, cost: 2 });
    const bad = await pool.evaluate('x.nope', { x: 'dyn' }, { x: {} });
    expect(bad.ok).toBe(false);
    const err = await pool.evaluate('x +', { x: 'int' }, { x: 1 });
    expect(err.ok).toBe(false);
  });

  test('a runaway is stopped at its deadline; other work goes on and the worker is replaced', async () => {
    const replaced = pool.pool.replaced;
    const started = performance.now();
    const spinning = pool.spin(300);
    // Meanwhile the other worker keeps answering.
    const meanwhile = await Promise.all(Array.from({ length: 50 }, (_, i) => pool.evaluate('x * 3', { x: 'int' }, { x: i })));
    expect(meanwhile.map((r) => (r.ok ? r.value : undefined))).toEqual(Array.from({ length: 50 }, (_, i) => i * 3));
    await expect(spinning).rejects.toBeInstanceOf(DeadlineError);
    const elapsed = performance.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(290);
    expect(elapsed).toBeLessThan(10_000);
    expect(pool.pool.replaced).toBe(replaced + 1);
    expect(pool.pool.size).toBe(2);
    // Both runaways at once: both stopped, the queued evaluations then served.
    const two = [pool.spin(200), pool.spin(200)];
    const after = pool.evaluate("'a' + 'b'", {}, {});
    for (const s of two) await expect(s).rejects.toBeInstanceOf(DeadlineError);
    expect(await after).toEqual({ ok: true, value: 'ab', cost: expect.any(Number) });
  });

  test('10,000 concurrent evaluations each get their own result', async () => {
    const n = 10_000;
    const results = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        pool.evaluate(
          'object.spec.replicas * 2 + size(object.metadata.name)',
          { object: 'dyn' },
          {
            object: { metadata: { name: `o-${i}` }, spec: { replicas: i } },
          },
        ),
      ),
    );
    let wrong = 0;
    results.forEach((r, i) => {
      if (!r.ok || r.value !== i * 2 + `o-${i}`.length) wrong++;
    });
    expect(wrong).toBe(0);
  });

  test('a worker that dies is replaced and its task fails', async () => {
    const replaced = pool.pool.replaced;
    const slots = (pool.pool as unknown as { slots: { worker: Worker }[] }).slots;
    const running = pool.spin(5000);
    await Bun.sleep(50);
    for (const s of slots) s.worker.terminate();
    await expect(running).rejects.toBeInstanceOf(WorkerError);
    for (let i = 0; i < 100 && pool.pool.replaced < replaced + 2; i++) await Bun.sleep(10);
    expect(pool.pool.replaced).toBe(replaced + 2);
    await pool.ready();
    expect(await pool.evaluate('1 + 1', {}, {})).toEqual({ ok: true, value: 2, cost: 1 });
  });
});
