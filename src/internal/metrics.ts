/**
 * Prometheus metric makers. Every metric of the project lives in a registry of its own process
 * part (the API's, the indexer's, the RPC clients'), never in prom-client's global one.
 */
import { Counter, Gauge, Histogram, type Registry } from "prom-client";

/** Makers of counters, gauges and histograms registered in `registry` only. */
export function metricsIn(registry: Registry) {
  return {
    counter: <L extends string>(name: string, help: string, labelNames: readonly L[] = []) =>
      new Counter<L>({ name, help, labelNames, registers: [registry] }),
    gauge: <L extends string>(name: string, help: string, labelNames: readonly L[] = []) =>
      new Gauge<L>({ name, help, labelNames, registers: [registry] }),
    /** A label-less gauge read at scrape time. */
    readGauge: (name: string, help: string, read: () => number) =>
      new Gauge({
        name,
        help,
        registers: [registry],
        collect() {
          this.set(read());
        },
      }),
    histogram: <L extends string>(name: string, help: string, labelNames: readonly L[], buckets: number[]) =>
      new Histogram<L>({ name, help, labelNames, buckets, registers: [registry] }),
  };
}

/**
 * A gauge labelled by `chain_id`, read at scrape time from `values` (chain id, value); a chain
 * whose value is absent or not finite is left out of the scrape. The API's and the indexer's
 * per-chain figures are all made so.
 */
export function perChainGauge(
  registry: Registry,
  name: string,
  help: string,
  values: () => Iterable<readonly [chainId: number, value: number | null | undefined]>,
): Gauge {
  return new Gauge({
    name,
    help,
    labelNames: ["chain_id"],
    registers: [registry],
    collect() {
      this.reset();
      for (const [chainId, v] of values()) {
        if (typeof v === "number" && Number.isFinite(v)) this.set({ chain_id: String(chainId) }, v);
      }
    },
  });
}
