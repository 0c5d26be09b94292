import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  expiredPartitions,
  missingPeriods,
  partitionName,
  periodStart,
  periodsAhead,
  periodsOf,
  RANGE_TABLES,
  type RangeTable,
  retentionCutoff,
} from "./partition-plan.js";

const DAY = 86_400_000;
const table = (parent: RangeTable["parent"]) => RANGE_TABLES.find((t) => t.parent === parent) as RangeTable;
const swaps = table("swaps");
const minutes = table("candles_1m");
const at = (iso: string) => Date.parse(iso);

describe("partition plan", () => {
  it("aligns days to UTC midnight and weeks to Monday", () => {
    assert.equal(periodStart(swaps, at("2025-01-01T17:45:12Z")), at("2025-01-01T00:00:00Z"));
    assert.equal(periodStart(swaps, at("2025-01-01T00:00:00Z")), at("2025-01-01T00:00:00Z"));
    // 2025-01-01 is a Wednesday: its week starts on Monday 2024-12-30.
    assert.equal(periodStart(minutes, at("2025-01-01T17:45:12Z")), at("2024-12-30T00:00:00Z"));
    assert.equal(periodStart(minutes, at("2024-12-29T23:59:59Z")), at("2024-12-23T00:00:00Z"));
    assert.equal(
      periodStart(swaps, at("1969-12-31T12:00:00Z")),
      at("1969-12-31T00:00:00Z"),
      "before the origin too",
    );
  });

  it("names a partition after its first day, as migration 011 does", () => {
    assert.equal(partitionName(swaps, at("2025-01-01T00:00:00Z")), "swaps_p20250101");
    assert.equal(partitionName(minutes, at("2024-12-30T00:00:00Z")), "candles_1m_p20241230");
  });

  it("lists the periods of a span, and the current one with those ahead", () => {
    assert.deepEqual(
      periodsOf(swaps, at("2025-01-01T23:00:00Z"), at("2025-01-03T00:00:00Z")).map((p) => p.from),
      [at("2025-01-01T00:00:00Z"), at("2025-01-02T00:00:00Z"), at("2025-01-03T00:00:00Z")],
    );
    assert.deepEqual(periodsOf(minutes, at("2025-01-01T00:00:00Z"), at("2025-01-01T01:00:00Z")), [
      { from: at("2024-12-30T00:00:00Z"), to: at("2025-01-06T00:00:00Z") },
    ]);
    const ahead = periodsAhead(minutes, at("2025-01-01T12:00:00Z"), 3);
    assert.equal(ahead.length, 4, "the current week and three after it");
    assert.equal(ahead[3]?.to, at("2025-01-27T00:00:00Z"));
  });

  it("leaves out the periods an existing partition overlaps, even in part", () => {
    const existing = [
      { from: at("2025-01-02T00:00:00Z"), to: at("2025-01-03T00:00:00Z") },
      { from: at("2025-01-05T12:00:00Z"), to: at("2025-01-06T12:00:00Z") },
    ];
    const wanted = periodsOf(swaps, at("2025-01-01T00:00:00Z"), at("2025-01-07T00:00:00Z"));
    assert.deepEqual(
      missingPeriods(existing, wanted).map((p) => new Date(p.from).toISOString().slice(0, 10)),
      ["2025-01-01", "2025-01-03", "2025-01-04", "2025-01-07"],
    );
  });

  it("expires the partitions whose every row is older than the retention, oldest first", () => {
    const now = at("2025-03-10T08:00:00Z");
    assert.equal(retentionCutoff(null, now), null, "null keeps forever");
    assert.equal(retentionCutoff(0, now), null, "0 keeps forever");
    const cutoff = retentionCutoff(30, now) as number;
    assert.equal(cutoff, now - 30 * DAY);
    const days = periodsOf(swaps, at("2025-02-05T00:00:00Z"), at("2025-02-09T00:00:00Z")).reverse();
    const expired = expiredPartitions(days, cutoff);
    // The cutoff is 2025-02-08T08:00: the day ending 2025-02-08T00:00 goes, the one holding the cutoff stays.
    assert.deepEqual(
      expired.map((p) => new Date(p.from).toISOString().slice(0, 10)),
      ["2025-02-05", "2025-02-06", "2025-02-07"],
    );
  });
});
