import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import { startApiOnOwnPostgres, timedGet } from "../_test/api-own-postgres.js";
import { fixture, fixtureConfig } from "../_test/market-fixture.js";
import { createSilentLogger } from "../internal/logger.js";

/** How long Postgres stays frozen. */
const FREEZE_MS = 30_000;
/**
 * The bounds answers must meet meanwhile: timeouts that must fire, asserted at 5× their values
 * (a loaded machine): a data request's database bound (api.databaseTimeoutMs, 4 s by default)
 * and /readyz's own database probe (2 s).
 */
const ANSWER_BOUND_MS = 5 * 4000;
const READYZ_BOUND_MS = 5 * 2000;

/**
 * A database frozen with SIGSTOP (the server's whole process group: postmaster and backends).
 * A Postgres of its own, so that freezing it does not stall the other test files' server.
 */
describe("a frozen database", () => {
  let own: Awaited<ReturnType<typeof startApiOnOwnPostgres>> | undefined;
  let base: string;
  let key: string;
  const logger = createSilentLogger();
  const config = fixtureConfig();

  before(async () => {
    own = await startApiOnOwnPostgres({
      prefix: "tokenmarket-freeze-",
      config,
      logger,
      answerCacheTtlMs: 200,
    });
    key = own.key;
    base = await own.app.listen({ host: "127.0.0.1", port: 0 });
  });
  after(() => own?.close());

  const signalServer = (signal: NodeJS.Signals) => own?.signalServer(signal);
  const timed = async (url: string) => {
    const answer = await timedGet(`${base}${url}`, key, ANSWER_BOUND_MS + 5000);
    return { ...answer, body: JSON.parse(answer.text) as Record<string, unknown> };
  };
  const data = (i: number) => `/api/v1/pairs?asset_id=${fixture.weth}:1&limit=${1 + (i % 50)}`;

  it("answers every request within 5× its database bound with a JSON 503 and Retry-After, /readyz 503; recovers after SIGCONT", async (t) => {
    assert.equal(5 * config.api.databaseTimeoutMs, ANSWER_BOUND_MS, "the bound follows the configuration");
    assert.equal((await timed(data(0))).status, 200);
    assert.equal((await timed("/readyz")).status, 200);

    signalServer("SIGSTOP");
    const frozenAt = performance.now();
    let firstTruthfulReadyz: number | undefined;
    const answers: Awaited<ReturnType<typeof timed>>[] = [];
    let i = 1;
    // For the freeze's length, and at least 10 data requests however slow the machine is.
    while (performance.now() - frozenAt < FREEZE_MS - ANSWER_BOUND_MS || answers.length < 10) {
      // Two data requests and a readiness probe at a time, like a few clients polling.
      const [a, b, ready] = await Promise.all([timed(data(i++)), timed(data(i++)), timed("/readyz")]);
      answers.push(a, b);
      assert.equal(ready.status, 503, JSON.stringify(ready.body));
      assert.equal(ready.body.database, "unreachable");
      assert.match(String((ready.body.reasons as string[])[0]), /database did not answer/);
      assert.ok(ready.ms < READYZ_BOUND_MS, `readyz took ${ready.ms} ms`);
      firstTruthfulReadyz ??= performance.now() - frozenAt;
    }
    signalServer("SIGCONT");
    const thawedAt = performance.now();

    assert.ok(answers.length >= 10, `${answers.length} requests`);
    for (const answer of answers) {
      assert.ok(answer.ms < ANSWER_BOUND_MS, `answered in ${Math.round(answer.ms)} ms`);
      assert.equal(answer.status, 503, JSON.stringify(answer.body));
      assert.equal(answer.body.statusCode, 503);
      assert.equal(typeof answer.body.message, "string");
      assert.equal(answer.retryAfter, "5");
    }

    // No restart: the same server and pool answer again.
    let recovered: number | undefined;
    while (recovered === undefined && performance.now() - thawedAt < 15_000) {
      const [answer, ready] = await Promise.all([timed(data(i++)), timed("/readyz")]);
      if (answer.status === 200 && ready.status === 200) recovered = performance.now() - thawedAt;
      else await delay(200);
    }
    assert.ok(recovered !== undefined, "answers again within 15 s of SIGCONT");
    const slowest = Math.max(...answers.map((a) => a.ms));
    t.diagnostic(
      `database frozen: ${answers.length} data answers, slowest ${Math.round(slowest)} ms; first 503 /readyz after ${Math.round(firstTruthfulReadyz ?? -1)} ms; recovered ${Math.round(recovered)} ms after SIGCONT`,
    );
  });
});
