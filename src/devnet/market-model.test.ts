import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { planDeployment } from "./deploy.js";
import { tokenSpecs } from "./market.js";
import { createMarketModel, tradingActivity } from "./market-model.js";
import { createRandom } from "./random.js";

describe("market model", () => {
  // Any accounts do: only the tokens' prices are used here.
  const accounts = Array.from(
    { length: 30 },
    (_, i) => `0x${(i + 1).toString(16).padStart(40, "0")}` as const,
  );
  const deployment = planDeployment({ chainId: 31337, seed: 42, accounts });

  it("keeps stablecoins at $1 and moves the others by a plausible amount over a week", () => {
    const start = 1_700_000_000;
    const model = createMarketModel({
      tokens: deployment.tokens,
      random: createRandom(42),
      startTimestamp: start,
    });
    for (let t = start; t <= start + 7 * 86_400; t += 300) model.advanceTo(t);
    for (const spec of tokenSpecs) {
      const price = model.priceUsd(spec.key);
      const initial = deployment.tokens[spec.key].initialPriceUsd;
      if (spec.dailyVolatility === 0) assert.equal(price, 1, `${spec.key} stays at $1`);
      else assert.ok(price > initial * 0.5 && price < initial * 2, `${spec.key}: ${initial} → ${price}`);
    }
  });

  it("is deterministic from its random source", () => {
    const run = () => {
      const model = createMarketModel({
        tokens: deployment.tokens,
        random: createRandom(9),
        startTimestamp: 0,
      });
      for (let t = 0; t < 86_400; t += 600) model.advanceTo(t);
      return model.priceUsd("WETH");
    };
    assert.equal(run(), run());
  });

  it("is quiet at night UTC and busiest in the European-American afternoon", () => {
    const wednesday = Date.UTC(2025, 0, 8) / 1000;
    const at = (hour: number) => tradingActivity(wednesday + hour * 3600);
    assert.ok(at(3) < at(10) && at(10) < at(14), "night < morning < afternoon");
    assert.ok(
      tradingActivity(Date.UTC(2025, 0, 11, 14) / 1000) < at(14),
      "Saturday is quieter than Wednesday",
    );
  });
});
