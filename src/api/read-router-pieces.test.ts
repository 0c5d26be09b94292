/**
 * The read router's pure pieces alone: a replica's lag and state, the notified commits a database
 * must hold, a snapshot's view of its rows, the view furthest behind, the weighted pick. The
 * router over real databases runs in replicas.test and context.test.
 */
import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { holdsNotified, notify } from "./commit-chase.js";
import { lowestOf, pickWeighted, type ReadTarget, snapshotOf } from "./read-target.js";
import { replicaLag, replicaState } from "./replica-health.js";
import type { ChainSync, SyncWatch } from "./sync-watch.js";

const sync = (blocks: Record<number, number>): SyncWatch =>
  ({
    get: (chainId: number) =>
      blocks[chainId] === undefined ? undefined : ({ chainId, indexedBlock: blocks[chainId] } as ChainSync),
    blockOf: (chainId: number) => blocks[chainId] ?? -1,
  }) as SyncWatch;
const target = (name: string, weight: number, blocks: Record<number, number> = {}): ReadTarget => ({
  name,
  role: name === "primary" ? "primary" : "replica",
  db: {} as ReadTarget["db"],
  weight,
  sync: sync(blocks),
  state: "ok",
  lagSeconds: 0,
});

describe("the read router's pieces", () => {
  it("a replica's lag: 0 when caught up; else the shorter of its replay age and the time since it was caught up", () => {
    const now = 100_000;
    assert.deepEqual(replicaLag({ standby: false, behind: "500", age: 9 }, undefined, now), {
      lag: 0,
      caughtUp: true,
    });
    assert.deepEqual(replicaLag({ standby: true, behind: "0", age: 9 }, undefined, now), {
      lag: 0,
      caughtUp: true,
    });
    assert.deepEqual(replicaLag({ standby: true, behind: "-8", age: null }, undefined, now), {
      lag: 0,
      caughtUp: true,
    });
    // An idle primary: the last replayed commit is old, but the replica was caught up 2 s ago.
    assert.deepEqual(replicaLag({ standby: true, behind: "100", age: 600 }, now - 2000, now), {
      lag: 2,
      caughtUp: false,
    });
    assert.deepEqual(replicaLag({ standby: true, behind: "100", age: 1.5 }, now - 2000, now), {
      lag: 1.5,
      caughtUp: false,
    });
    assert.deepEqual(replicaLag({ standby: true, behind: null, age: null }, undefined, now), {
      lag: null,
      caughtUp: false,
    });
    assert.deepEqual(replicaLag({ standby: true, behind: "1", age: -0.5 }, undefined, now), {
      lag: 0,
      caughtUp: false,
    });
  });

  it("a replica's state: down when unreachable, lagging beyond the bound or when unknown, else ok", () => {
    assert.equal(replicaState(false, 0, 5), "down");
    assert.equal(replicaState(true, 5, 5), "ok");
    assert.equal(replicaState(true, 5.001, 5), "lagging");
    assert.equal(replicaState(true, null, 5), "lagging");
  });

  it("notified commits: a database holds them at or above each block, exactly at it after a rollback", () => {
    let notified = notify(new Map(), { chainId: 1, block: 10 });
    notified = notify(notified, { chainId: 2, block: 5 });
    assert.equal(
      holdsNotified(notified, (id) => ({ 1: 10, 2: 7 })[id] ?? -1),
      true,
    );
    assert.equal(
      holdsNotified(notified, (id) => ({ 1: 9, 2: 7 })[id] ?? -1),
      false,
    );
    notified = notify(notified, { chainId: 1, block: 8 });
    assert.deepEqual(notified.get(1), { block: 8, rollback: true });
    assert.equal(
      holdsNotified(notified, (id) => ({ 1: 10, 2: 7 })[id] ?? -1),
      false,
      "still on the undone branch",
    );
    assert.equal(
      holdsNotified(notified, (id) => ({ 1: 8, 2: 7 })[id] ?? -1),
      true,
    );
    notified = notify(notified, { chainId: 1, block: 9 });
    assert.deepEqual(notified.get(1), { block: 9, rollback: false });
  });

  it("a snapshot answers from its own rows: blocks, freshness headers, the off-canonical reason", () => {
    const at = new Date("2026-03-04T05:06:07.000Z");
    const snapshot = snapshotOf("replica:5432", [
      { chainId: 1, indexedBlock: 100, indexedBlockTime: at, offCanonical: null },
      { chainId: 137, indexedBlock: 7, indexedBlockTime: null, offCanonical: "rolled back" },
    ]);
    assert.equal(snapshot.target, "replica:5432");
    assert.equal(snapshot.blockOf(1), 100);
    assert.equal(snapshot.blockOf(56), -1);
    assert.deepEqual(snapshot.headers([1, 137, 56, 1]), {
      "x-indexed-block": "1=100,137=7",
      "x-indexed-at": "1=2026-03-04T05:06:07Z",
    });
    assert.equal(snapshot.headers([56]), undefined);
    assert.equal(snapshot.offCanonical([1]), undefined);
    assert.equal(snapshot.offCanonical([1, 137]), "rolled back");
  });

  it("the view of a chain is the database furthest behind; none when one lacks the chain", () => {
    const a = target("a", 1, { 1: 10, 2: 4 });
    const b = target("b", 1, { 1: 8 });
    assert.equal(lowestOf([a, b], 1)?.indexedBlock, 8);
    assert.equal(lowestOf([a, b], 2), undefined);
    assert.equal(lowestOf([a], 2)?.indexedBlock, 4);
  });

  it("the weighted pick follows the weights; the last one when every weight is 0", () => {
    const [a, b, c] = [target("a", 1), target("b", 3), target("c", 0)];
    assert.equal(
      pickWeighted([a, b, c], () => 0),
      a,
    );
    assert.equal(
      pickWeighted([a, b, c], () => 0.24),
      a,
    );
    assert.equal(
      pickWeighted([a, b, c], () => 0.25),
      b,
    );
    assert.equal(
      pickWeighted([a, b, c], () => 0.999),
      b,
    );
    assert.equal(
      pickWeighted([target("x", 0), c], () => 0.5),
      c,
    );
  });
});
