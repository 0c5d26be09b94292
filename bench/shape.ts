/**
 * `npm run bench:shape`: start-up time and memory of a synthetic Ethereum of 1,000,000 pools and
 * 300,000 tokens, and the rate at which it serves raw eth_getLogs (the pools' topics) with the
 * blocks' timestamps, as an indexer's backfill asks for them, measured by a simple client.
 *
 *   npm run bench:shape -- [--pools N] [--tokens N] [--blocks N] [--range N]
 */
import { parseArgs } from "node:util";
import { swapTopics as allSwapTopics, poolTopicsOf } from "../src/protocols/index.js";
import { startShapeServer } from "../src/shape/server.js";

const { values } = parseArgs({
  options: {
    pools: { type: "string", default: "1000000" },
    tokens: { type: "string", default: "300000" },
    blocks: { type: "string", default: "400" },
    range: { type: "string", default: "10" },
  },
});
const mb = (bytes: number) => `${(bytes / 1048576).toFixed(0)} MB`;
const blocks = Number(values.blocks);
const range = Number(values.range);

const rssBefore = process.memoryUsage().rss;
const started = performance.now();
const server = await startShapeServer({
  profile: "ethereum",
  pools: Number(values.pools),
  tokens: Number(values.tokens),
  historyBlocks: blocks + 10,
  live: false,
  port: 0,
});
const call = async <T>(method: string, params: unknown[] = []): Promise<T> => {
  const response = await fetch(server.url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(Array.isArray(method) ? method : { jsonrpc: "2.0", id: 1, method, params }),
  });
  const body = (await response.json()) as { result: T; error?: { message: string } };
  if (body.error) throw new Error(body.error.message);
  return body.result;
};
const head = Number(await call<string>("eth_blockNumber"));
const firstAnswerMs = performance.now() - started;
const rssStarted = process.memoryUsage().rss;
const info = await call<{ pools: number; tokens: number; creationEraBlocks: number }>("shape_info");
console.log(
  `start-up: ${info.pools} pools, ${info.tokens} tokens, head ${head} (creation era ${info.creationEraBlocks} blocks): ` +
    `first answer after ${firstAnswerMs.toFixed(0)} ms, RSS ${mb(rssStarted)} (${mb(rssStarted - rssBefore)} over the bare process)`,
);

const topics = [
  ...new Set([
    ...poolTopicsOf({ protocol: "v2", swapEvent: "uniswap" }),
    ...poolTopicsOf({ protocol: "v3", swapEvent: "uniswap" }),
  ]),
];
// Of those, the swaps (the families' swap topics are the indexer's own list).
const swapTopics = new Set(topics.filter((topic) => allSwapTopics.includes(topic)));
const from = head - blocks + 1;
let swaps = 0;
let logs = 0;
const t0 = performance.now();
let firstLogsMs = 0;
for (let n = from; n <= head; n += range) {
  const to = Math.min(head, n + range - 1);
  const [got] = await Promise.all([
    call<{ topics: string[] }[]>("eth_getLogs", [
      { fromBlock: `0x${n.toString(16)}`, toBlock: `0x${to.toString(16)}`, topics: [topics] },
    ]),
    // The blocks' timestamps, in one JSON-RPC batch.
    fetch(server.url, {
      method: "POST",
      body: JSON.stringify(
        Array.from({ length: to - n + 1 }, (_, i) => ({
          jsonrpc: "2.0",
          id: i,
          method: "eth_getBlockByNumber",
          params: [`0x${(n + i).toString(16)}`, false],
        })),
      ),
    }).then((r) => r.json()),
  ]);
  if (firstLogsMs === 0) firstLogsMs = performance.now() - t0;
  logs += got.length;
  for (const log of got) if (swapTopics.has(log.topics[0] as `0x${string}`)) swaps++;
}
const seconds = (performance.now() - t0) / 1000;
const stats = server.chain.stats();
console.log(
  `first eth_getLogs (generating ${from - info.creationEraBlocks} trading blocks from the creation era's end): ${firstLogsMs.toFixed(0)} ms`,
);
console.log(
  `served ${blocks} blocks, ${logs} logs, ${swaps} swaps in ${seconds.toFixed(1)} s: ${(swaps / seconds).toFixed(0)} swaps/s, ` +
    `${(blocks / seconds).toFixed(1)} blocks/s (eth_getLogs ranges of ${range} blocks + headers)`,
);
console.log(
  `after: RSS ${mb(process.memoryUsage().rss)}, heap ${mb(process.memoryUsage().heapUsed)}, checkpoints ${stats.checkpointEntries} entries of ${stats.checkpointPools} pools`,
);
await server.close();
