// Builds the explorer page (web/index.html) into web/dist, which src/api/web.ts serves at `/`.
// `npx vite --config web/vite.config.ts` serves it for development with the API proxied to
// TOKENMARKET_API_URL (default http://127.0.0.1:8080, what `npm start` prints), the stream too.

import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

const root = fileURLToPath(new URL(".", import.meta.url));
const api = process.env.TOKENMARKET_API_URL ?? "http://127.0.0.1:8080";

export default defineConfig({
  root,
  base: "/",
  publicDir: "public",
  build: {
    outDir: "dist",
    emptyOutDir: true,
    target: "es2022",
    // lightweight-charts is most of the weight; one chunk loads in one round trip.
    chunkSizeWarningLimit: 400,
    reportCompressedSize: false,
  },
  server: {
    proxy: {
      // ws: the live stream /v1/stream is a WebSocket upgrade.
      "/v1": { target: api, ws: true },
      "/api/v1": api,
      "/web-config.json": api,
    },
  },
});
