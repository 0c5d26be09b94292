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
    `API at ${fmt(load.swaps)} swaps (${fmt(load.tokens)} tokens, ${fmt(load.pools)} pools, ${load.days} days; database ${fmt(Math.round(Number(api.databaseBytes) / 1e6))} MB, ${fmt(Math.round(Number(api.bytesPerMillionSwaps) / 1e6))} MB per million swaps with candles, series and indexes; loaded in ${fmt(Math.round(Object.values(api.loaderSeconds as Record<string, number>).reduce((a, b) => a + b, 0)))} s). One request at a time over HTTP, cache off:`,
    "",
    "| query | samples | p50 ms | p99 ms | max ms | p99 / `/healthz` p99 | non-200 |",
    "|---|---:|---:|---:|---:|---:|---:|",
    `| \`/healthz\` (baseline) | ${baseline.samples} | ${baseline.p50Ms} | ${baseline.p99Ms} | ${baseline.maxMs} | 1 | ${baseline.non200} |`,
  ];
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
    }): exit ${sub.exitCode}, ${sub.seconds} s; ${name} in \`bench/results/${name}.json\`.`,
  ];
}

/** The figures block of the last run. */
export function renderFigures(out: Record<string, unknown>): string {
  const meta = out.meta as Record<string, unknown>;
  const lines = [
    START,
    `Last run: ${meta.date}, profile \`${meta.profile}\`, ${meta.machine}, Node ${meta.node}, load average ${(meta.loadAverageAtStart as number[]).join(" ")} at start, ${(meta.loadAverageAtEnd as number[] | undefined)?.join(" ") ?? "–"} at the end, ${meta.seconds} s in all.`,
    "",
  ];
  if (out.api) lines.push(...apiTable(out.api as Record<string, unknown>), "");
  if (out.live) lines.push(...liveLines(out.live as Record<string, unknown>), "");
  lines.push(...subTable("ingest", out.ingest as Record<string, unknown> | undefined));
  lines.push(...subTable("stats", out.stats as Record<string, unknown> | undefined));
  lines.push(END);
  return lines.join("\n");
}

function liveLines(live: Record<string, unknown>): string[] {
  return ["```json", JSON.stringify(live, null, 2), "```"];
}

/** BENCHMARKS.md with the figures block replaced (or a "Scale" section appended). */
export function renderScaleSection(previous: string, out: Record<string, unknown>): string {
  const figures = renderFigures(out);
  const a = previous.indexOf(START);
  const b = previous.indexOf(END);
  if (a >= 0 && b > a) return `${previous.slice(0, a)}${figures}${previous.slice(b + END.length)}`;
  return `${previous.trimEnd()}\n\n## Scale (issue 10)\n\n${figures}\n`;
}
