import * as assert from "node:assert/strict";
import type { Pricing } from "../pricing/pricing.js";
import type { Db } from "../store/db.js";
import { snapshotAggregates } from "./sql.js";

/** Refreshes both databases' statistics at `at`, then asserts every aggregate table of the chain equal. */
export async function assertSameAggregates(
  pricing: Pick<Pricing, "refreshStats">,
  [actual, expected]: [Db, Db],
  chainId: number,
  at: Date,
  label: string,
): Promise<void> {
  await pricing.refreshStats(actual, chainId, at);
  await pricing.refreshStats(expected, chainId, at);
  assert.deepEqual(
    await snapshotAggregates(actual, chainId),
    await snapshotAggregates(expected, chainId),
    label,
  );
}
