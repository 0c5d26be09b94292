import * as assert from "node:assert/strict";
import { type Address, createPublicClient, decodeEventLog, type Hex, http, parseAbi } from "viem";
import type { Queryable } from "../store/db.js";
import { loadStoredSwaps } from "./sql.js";

// The independent reading of the chain that the indexer's output is checked against: viem's own
// ABI decoding of the receipts' logs (not the indexer's decoders), transactions for maker and
// exchange, and the pools' token balances rebuilt from the ERC-20 Transfer logs of the receipts
// (not from Sync, Mint, Collect or Swap amounts).

const abi = parseAbi([
  "event Transfer(address indexed from, address indexed to, uint256 value)",
  "event Swap(address indexed sender, uint256 amount0In, uint256 amount1In, uint256 amount0Out, uint256 amount1Out, address indexed to)",
  "event Swap(address indexed sender, address indexed recipient, int256 amount0, int256 amount1, uint160 sqrtPriceX96, uint128 liquidity, int24 tick)",
  "function balanceOf(address owner) view returns (uint256)",
  "function decimals() view returns (uint8)",
]);

/** A pool whose swaps are read; `protocol` is its family's name. */
export type PoolRef = { address: Address; protocol: string; token0: Address; token1: Address };

/** A swap as the chain's receipts say it, in the swaps table's terms (amounts as decimal text). */
export type ExpectedSwap = {
  block_number: number;
  log_index: number;
  block_hash: string;
  block_time: string;
  tx_hash: string;
  tx_index: number;
  pool: string;
  maker: string;
  exchange: string | null;
  sender: string;
  recipient: string;
  amount0_in: string;
  amount1_in: string;
  amount0_out: string;
  amount1_out: string;
  reserve0: string;
  reserve1: string;
  sqrt_price_x96: string | null;
  liquidity: string | null;
  tick: number | null;
  price: number | null;
};

/**
 * Reads every block of [fromBlock, toBlock] with its transactions and receipts and returns the
 * swaps of `pools`, with the pools' balances after each swap from Transfer logs (starting from
 * balanceOf at fromBlock − 1) and the decimal-adjusted price from the event (V3) or balances (V2).
 */
export async function readSwapsFromReceipts(args: {
  rpcUrl: string;
  pools: readonly PoolRef[];
  fromBlock: number;
  toBlock: number;
}): Promise<ExpectedSwap[]> {
  const client = createPublicClient({
    transport: http(args.rpcUrl, { batch: { batchSize: 200 }, timeout: 60_000 }),
  });
  const pools = new Map(
    args.pools.map((p) => [p.address.toLowerCase(), { ...p, address: p.address.toLowerCase() as Address }]),
  );
  const tokens = [
    ...new Set(args.pools.flatMap((p) => [p.token0.toLowerCase(), p.token1.toLowerCase()])),
  ] as Address[];
  const decimals = new Map<string, number | null>();
  await Promise.all(
    tokens.map(async (token) => {
      const value = await client
        .readContract({ address: token, abi, functionName: "decimals" })
        .catch(() => null);
      decimals.set(token, value === null ? null : Number(value));
    }),
  );
  const balances = new Map<string, bigint>();
  const balanceKey = (pool: string, token: string) => `${pool}:${token}`;
  await Promise.all(
    [...pools.values()].flatMap((pool) =>
      [pool.token0, pool.token1].map(async (token) => {
        const value =
          args.fromBlock === 0
            ? 0n
            : await client.readContract({
                address: token,
                abi,
                functionName: "balanceOf",
                args: [pool.address],
                blockNumber: BigInt(args.fromBlock - 1),
              });
        balances.set(balanceKey(pool.address, token.toLowerCase()), value);
      }),
    ),
  );

  const expected: ExpectedSwap[] = [];
  for (let start = args.fromBlock; start <= args.toBlock; start += 50) {
    const numbers = Array.from({ length: Math.min(50, args.toBlock - start + 1) }, (_, i) =>
      BigInt(start + i),
    );
    const blocks = await Promise.all(
      numbers.map((n) => client.getBlock({ blockNumber: n, includeTransactions: true })),
    );
    const receipts = await Promise.all(
      blocks.map((b) =>
        Promise.all(b.transactions.map((tx) => client.getTransactionReceipt({ hash: tx.hash }))),
      ),
    );
    blocks.forEach((block, b) => {
      const byHash = new Map(block.transactions.map((tx) => [tx.hash, tx]));
      const logs = (receipts[b] ?? []).flatMap((r) => r.logs).sort((x, y) => x.logIndex - y.logIndex);
      for (const log of logs) {
        const address = log.address.toLowerCase();
        let decoded: ReturnType<typeof decodeEventLog<typeof abi>>;
        try {
          decoded = decodeEventLog({ abi, data: log.data, topics: log.topics });
        } catch {
          continue;
        }
        if (decoded.eventName === "Transfer") {
          const { from, to, value } = decoded.args as { from: Address; to: Address; value: bigint };
          for (const [pool, sign] of [
            [from.toLowerCase(), -1n],
            [to.toLowerCase(), 1n],
          ] as const) {
            const key = balanceKey(pool, address);
            const current = balances.get(key);
            if (current !== undefined) balances.set(key, current + sign * value);
          }
          continue;
        }
        const pool = pools.get(address);
        if (!pool || decoded.eventName !== "Swap") continue;
        const tx = byHash.get(log.transactionHash as Hex);
        if (!tx) throw new Error(`no transaction ${log.transactionHash}`);
        const d0 = decimals.get(pool.token0.toLowerCase()) ?? null;
        const d1 = decimals.get(pool.token1.toLowerCase()) ?? null;
        const reserve0 = balances.get(balanceKey(pool.address, pool.token0.toLowerCase())) as bigint;
        const reserve1 = balances.get(balanceKey(pool.address, pool.token1.toLowerCase())) as bigint;
        const base = {
          block_number: Number(block.number),
          log_index: log.logIndex,
          block_hash: block.hash,
          block_time: new Date(Number(block.timestamp) * 1000).toISOString(),
          tx_hash: log.transactionHash,
          tx_index: log.transactionIndex,
          pool: pool.address,
          maker: tx.from.toLowerCase(),
          exchange: tx.to ? tx.to.toLowerCase() : null,
          reserve0: reserve0.toString(),
          reserve1: reserve1.toString(),
        };
        const args_ = decoded.args as Record<string, unknown>;
        if ("amount0In" in args_) {
          const a = args_ as {
            sender: Address;
            to: Address;
            amount0In: bigint;
            amount1In: bigint;
            amount0Out: bigint;
            amount1Out: bigint;
          };
          expected.push({
            ...base,
            sender: a.sender.toLowerCase(),
            recipient: a.to.toLowerCase(),
            amount0_in: a.amount0In.toString(),
            amount1_in: a.amount1In.toString(),
            amount0_out: a.amount0Out.toString(),
            amount1_out: a.amount1Out.toString(),
            sqrt_price_x96: null,
            liquidity: null,
            tick: null,
            price:
              d0 === null || d1 === null ? null : (Number(reserve1) / Number(reserve0)) * 10 ** (d0 - d1),
          });
        } else {
          const a = args_ as {
            sender: Address;
            recipient: Address;
            amount0: bigint;
            amount1: bigint;
            sqrtPriceX96: bigint;
            liquidity: bigint;
            tick: number;
          };
          const sqrt = Number(a.sqrtPriceX96) / 2 ** 96;
          expected.push({
            ...base,
            sender: a.sender.toLowerCase(),
            recipient: a.recipient.toLowerCase(),
            amount0_in: (a.amount0 > 0n ? a.amount0 : 0n).toString(),
            amount1_in: (a.amount1 > 0n ? a.amount1 : 0n).toString(),
            amount0_out: (a.amount0 < 0n ? -a.amount0 : 0n).toString(),
            amount1_out: (a.amount1 < 0n ? -a.amount1 : 0n).toString(),
            sqrt_price_x96: a.sqrtPriceX96.toString(),
            liquidity: a.liquidity.toString(),
            tick: a.tick,
            price: d0 === null || d1 === null ? null : sqrt * sqrt * 10 ** (d0 - d1),
          });
        }
      }
    });
  }
  return expected;
}

/**
 * Asserts that the stored swaps of `chainId` in [fromBlock, toBlock] are, one for one and field
 * by field, the expected ones (prices to 1e-9 relative: the reference computes them in floats).
 */
export async function assertSwapsMatch(
  db: Queryable,
  chainId: number,
  expected: readonly ExpectedSwap[],
  range: { fromBlock: number; toBlock: number },
): Promise<void> {
  const rows = await loadStoredSwaps(db, chainId, range);
  assert.equal(
    rows.length,
    expected.length,
    "as many stored swaps as Swap logs of known pools in the receipts",
  );
  for (let i = 0; i < expected.length; i++) {
    const want = expected[i] as ExpectedSwap;
    const got = rows[i] as Record<string, unknown>;
    const where = `swap ${want.block_number}:${want.log_index}`;
    for (const [field, value] of Object.entries(want)) {
      const actual = field === "block_time" ? (got[field] as Date).toISOString() : got[field];
      if (field === "price") {
        if (value === null) assert.equal(actual, null, `${where} price is null (decimals unknown)`);
        else {
          const relative = Math.abs((actual as number) - (value as number)) / Math.abs(value as number);
          assert.ok(relative < 1e-9, `${where} price ${actual} vs ${value}`);
        }
        continue;
      }
      assert.equal(actual, value, `${where} ${field}`);
    }
  }
}
