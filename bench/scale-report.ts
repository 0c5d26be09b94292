/**
 * The "Scale" section of BENCHMARKS.md from bench/results/scale.json: the figures between the
 * markers are rewritten by each run of `npm run bench:scale`; the prose around them (how to run
 * it, what the figures mean) is kept as written. Without the markers, the section is appended.
 */
const START = "<!-- scale:figures (written by npm run bench:scale) -->";
const END = "<!-- /scale:figures -->";

type Latency = { samples: number; p50Ms: number; p99Ms: number; maxMs: number; non200: number };

const fmt = (n: number | undefined) => (n === undefined || Number.isNaN(n) ? "–" : n.toLocaleString("en-US"));

function apiTable(api: Record<string, unknown>): string[] {
  const baseline = api.baseline as Latency;
  const endpoints = api.endpoints as Record<string, Latency & { p99OverBaseline: number }>;
  const load = api.load as { tokens: number; pools: number; swaps: number; days: number };
  const lines = [
    `API at ${fmt(load.swaps)} swaps (${fmt(load.tokens)} tokens, ${fmt(load.pools)} pools, ${load.days} days; database ${fmt(Math.round(Number(api.databaseBytes) / 1e6))} MB in all, the tokens', pools' and their statistics' rows included; loaded in ${fmt(Math.round(Object.values(api.loaderSeconds as Record<string, number>).reduce((a, b) => a + b, 0)))} s). One request at a time over HTTP, cache off:`,
    "",
    "| query | samples | p50 ms | p99 ms | max ms | p99 / `/healthz` p99 | non-200 |",
    "|---|---:|---:|---:|---:|---:|---:|",
    `| \`/healthz\` (baseline) | ${baseline.samples} | ${baseline.p50Ms} | ${baseline.p99Ms} | ${baseline.maxMs} | 1 | ${baseline.non200} |`,
  ];
  const trip = api.databaseRoundTrip as Latency | undefined;
  if (trip) {
    lines.push(
      `| \`SELECT 1\` from the benchmark (baseline: one database round trip) | ${trip.samples} | ${trip.p50Ms} | ${trip.p99Ms} | ${trip.maxMs} | ${Math.round((trip.p99Ms / baseline.p99Ms) * 100) / 100} | – |`,
    );
  }
  for (const [name, e] of Object.entries(endpoints)) {
    lines.push(
      `| ${name} | ${e.samples} | ${e.p50Ms} | **${e.p99Ms}** | ${e.maxMs} | ${e.p99OverBaseline} | ${e.non200} |`,
    );
  }
  return lines;
}

function subTable(name: string, sub: Record<string, unknown> | undefined): string[] {
  if (!sub) return [];
  return [
    `- \`npm run ${sub.script}\` (${
      Object.entries(sub.env as Record<string, string>)
        .map(([k, v]) => `${k}=${v}`)
        .join(" ") || "defaults"
    }): exit ${sub.exitCode}, ${sub.seconds} s; ${name} in \`bench/results/${name}.json\`${sub.summary ? `: “${sub.summary}”` : ""}.`,
  ];
}

/** One line per earlier run whose figures this one left in place: "The live and ingest figures are from the run of …". */
function carriedOver(meta: Record<string, unknown>): string[] {
  const byRun = new Map<string, string[]>();
  for (const part of ["api", "retention", "live", "ingest", "stats"]) {
    const from = meta[`${part}From`];
    if (typeof from === "string") byRun.set(from, [...(byRun.get(from) ?? []), part]);
  }
  return [...byRun].map(([from, parts]) => {
    const names = parts.length === 1 ? parts[0] : `${parts.slice(0, -1).join(", ")} and ${parts.at(-1)}`;
    return `The ${names} figures are from the run of ${from} (left out of this one).`;
  });
}

/** The figures block of the last run. */
export function renderFigures(out: Record<string, unknown>): string {
  const meta = out.meta as Record<string, unknown>;
  const lines = [
    START,
    `Last run: ${meta.date}, profile \`${meta.profile}\`, ${meta.machine}, Node ${meta.node}, load average ${(meta.loadAverageAtStart as number[]).join(" ")} at start, ${(meta.loadAverageAtEnd as number[] | undefined)?.join(" ") ?? "–"} at the end, ${meta.seconds} s in all.`,
    ...carriedOver(meta),
    "",
  ];
  if (out.api) lines.push(...apiTable(out.api as Record<string, unknown>), "");
  if (out.retention) lines.push(...retentionLines(out.retention as Record<string, unknown>), "");
  if (out.live) lines.push(...liveLines(out.live as Record<string, unknown>), "");
  lines.push(...subTable("ingest", out.ingest as Record<string, unknown> | undefined));
  for (const run of (out.stats as Record<string, unknown>[] | undefined) ?? [])
    lines.push(...subTable("stats", run));
  lines.push(END);
  return lines.join("\n");
}

function liveLines(live: Record<string, unknown>): string[] {
  if (live.reachedHead === false) {
    const rss = live.rssMb as { peakHwm: number };
    return [
      `Live following: ${live.profile} profile (${live.blockTimeMs} ms blocks, ≈ ${live.swapsPerBlock} swaps a block), ${fmt(Number(live.pools))} pools: **the indexer did not reach the head**: it indexed ${live.indexedBlocksPerSecond} blocks/s against the node's ${live.nodeBlocksPerSecond} (lag ${live.lastLag} blocks at the end). Service peak RSS ${rss.peakHwm} MB.`,
    ];
  }
  const d = live.delayMs as {
    samples: number;
    p50: number;
    p99: number;
    max: number | null;
    missing: number;
  };
  const lag = live.headLagBlocks as { maxWhileFollowing: number; secondHalfMean: number; keptUp: boolean };
  const rss = live.rssMb as { peakHwm: number; last: number | null };
  const h = live.healthzMs as { p50: number; p99: number };
  return [
    `Live following: ${live.profile} profile (${live.blockTimeMs} ms blocks, ≈ ${live.swapsPerBlock} swaps a block), ${fmt(Number(live.pools))} pools, ${live.blocksFollowed} blocks after the indexer first reached the head (catch-up from block 0: ${live.catchUpSeconds} s).`,
    "",
    "| figure | value | baseline |",
    "|---|---:|---|",
    `| block at the node → its trade in \`GET /api/v1/trades\`, p50 / p99 / max | ${d.p50} / **${d.p99}** / ${d.max} ms (${d.samples} blocks, ${d.missing} not seen in 60 s) | block time ${live.blockTimeMs} ms (p99 = ${live.p99OverBlockTime} blocks); service \`/healthz\` p50 ${h.p50}, p99 ${h.p99} ms |`,
    `| head lag while following, max / mean of the second half | ${lag.maxWhileFollowing} / ${lag.secondHalfMean} blocks | kept up (≤ 5 blocks over the second half): ${lag.keptUp ? "yes" : "**no**"} |`,
    `| service RSS, peak (VmHWM) / last | **${rss.peakHwm}** / ${rss.last} MB | acceptance: ≤ 1,536 MB |`,
  ];
}

function retentionLines(r: Record<string, unknown>): string[] {
  const series = r.series as {
    day: number;
    swapsRows: number;
    swapsBytes: number;
    databaseBytes: number;
    dropped: number;
  }[];
  const mb = (b: number) => fmt(Math.round(b / 1e5) / 10);
  return [
    `Retention: ${r.days} days × ${fmt(Number(r.swapsPerDay))} swaps, swaps kept ${r.retentionDays} days; the upkeep after each day. A day of swaps adds ${mb(Number(r.swapsBytesPerDayWhileFilling))} MB while the window fills (keeping everything would end at ${mb(Number(r.keepForeverSwapsBytesAtEnd))} MB); once full, the swaps' bytes move within ${mb(Number(r.swapsBytesSpreadWhenFull))} MB (${r.spreadOverDailyGrowth} of a day's growth). ${fmt(Math.round(Number(r.bytesPerMillionSwaps) / 1e6))} MB of swaps (with indexes) per million swaps.`,
    "",
    "| day | swaps stored | swaps MB | database MB | partitions dropped |",
    "|---:|---:|---:|---:|---:|",
    ...series.map(
      (p) =>
        `| ${p.day} | ${fmt(p.swapsRows)} | ${mb(p.swapsBytes)} | ${mb(p.databaseBytes)} | ${p.dropped} |`,
    ),
  ];
}

/** BENCHMARKS.md with the figures block replaced (or a "Scale" section appended). */
export function renderScaleSection(previous: string, out: Record<string, unknown>): string {
  const figures = renderFigures(out);
  const a = previous.indexOf(START);
  const b = previous.indexOf(END);
  if (a >= 0 && b > a) return `${previous.slice(0, a)}${figures}${previous.slice(b + END.length)}`;
  return `${previous.trimEnd()}\n\n## Scale\n\n${figures}\n`;
}
