// The pool reads moved to src/store/pools.ts; this name stays for src/api/trade-records.ts until it imports from there.
export type { PoolRow } from "../../store/pools.js";
