/**
 * The plain types (and pure helpers on them) shared by the stages and the store. The lowest
 * layer after src/internal: it imports nothing else, so the store can use it without pointing
 * up into a stage.
 */
export * from "./batch.js";
export * from "./candles.js";
export * from "./chain.js";
export * from "./market.js";
export * from "./numbers.js";
export * from "./pools.js";
export * from "./pricing.js";
