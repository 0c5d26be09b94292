import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createEndpoints, hostOf } from "./endpoints.js";
import { defaultRpcOptions } from "./options.js";

describe("endpoints of a chain", () => {
  const urls = ["https://one.example/v2/SECRETKEY", "http://127.0.0.1:8545", "wss://three.example:8443/x"];

  it("names each URL by its host, never its path (which may carry a key)", () => {
    const endpoints = createEndpoints({ chain: { rpc: urls }, options: defaultRpcOptions });
    assert.deepEqual(
      urls.map((_, i) => endpoints.at(i).host),
      ["one.example", "127.0.0.1:8545", "three.example:8443"],
    );
    assert.equal(hostOf("not a url"), "unknown");
  });

  it("fails over once for concurrent failures of one URL, in order, and back to the first after primaryRetryMs", () => {
    let now = 1_000;
    const endpoints = createEndpoints({
      chain: { rpc: urls },
      options: { ...defaultRpcOptions, primaryRetryMs: 500 },
      now: () => now,
    });
    assert.equal(endpoints.pick(), 0);
    assert.equal(endpoints.failOver(0), true);
    assert.equal(endpoints.failOver(0), false, "a second failure of the URL left behind does not move again");
    assert.equal(endpoints.pick(), 1);
    now += 400;
    assert.equal(endpoints.failOver(1), true);
    assert.equal(endpoints.pick(), 2);
    now += 500;
    assert.equal(endpoints.pick(), 2, "not yet: primaryRetryMs counts from the last failover");
    now += 1;
    assert.equal(endpoints.pick(), 0, "the first URL again");
  });

  it("never fails over with one URL, and gives each URL a rate gate of its own", () => {
    const single = createEndpoints({ chain: { rpc: [urls[0] as string] }, options: defaultRpcOptions });
    assert.equal(single.failOver(0), false);
    const endpoints = createEndpoints({ chain: { rpc: urls }, options: defaultRpcOptions });
    endpoints.at(0).gate.throttled(0);
    assert.equal(endpoints.at(0).gate.state().share, 0.5);
    assert.equal(endpoints.at(1).gate.state().share, 1, "another provider is not slowed down");
  });
});
