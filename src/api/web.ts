import { createHash } from "node:crypto";
import { readFile, stat } from "node:fs/promises";
import * as path from "node:path";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";

/** Where `npm run build:web` (web/build.ts) writes the explorer page. */
export const defaultWebDistDir = path.resolve(import.meta.dirname, "../../web/dist");

export type WebOptions = {
  /** The built page; default web/dist. */
  distDir?: string;
  /** The demo API key, offered to the page by /web-config.json; leave out unless `api.demoKey` is on. */
  demoKey?: string | undefined;
  /**
   * Origins (`https://host`) the page may load token logos from (`web.logoHosts`): they join the
   * policy's `img-src` and are told to the page by /web-config.json, which shows only logos it may load.
   */
  logoHosts?: readonly string[] | undefined;
};

const contentTypes: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".webp": "image/webp",
  ".woff2": "font/woff2",
  ".json": "application/json; charset=utf-8",
  ".txt": "text/plain; charset=utf-8",
  ".webmanifest": "application/manifest+json",
  ".map": "application/json; charset=utf-8",
};

/** An origin the policy can name: https, a host, an optional port, nothing else (no path, no `;`). */
const logoHostPattern = /^https:\/\/[a-z0-9]([a-z0-9.-]*[a-z0-9])?(:\d{1,5})?$/;

/**
 * The page may load and call nothing but this server (its API and its stream: `connect-src
 * 'self'` covers `ws://` and `wss://` to the same host), with one exception: token logos from the
 * configured logo hosts (`img-src`). No CDN, no outside fonts or scripts. The charts set their
 * styles through the CSSOM, which `style-src 'self'` allows.
 */
export function contentSecurityPolicy(logoHosts: readonly string[] = []): string {
  for (const host of logoHosts) {
    if (!logoHostPattern.test(host)) throw new Error(`not a logo host origin: ${JSON.stringify(host)}`);
  }
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    ["img-src 'self' data:", ...logoHosts].join(" "),
    "font-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; ");
}

const notBuiltPage = `<!doctype html><html lang="en"><meta charset="utf-8"><title>tokenmarket</title>
<body style="font-family:system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem">
<h1>The explorer page is not built</h1>
<p>Build it with <code>npm run build:web</code> (or <code>npx tsx web/build.ts</code>) and reload.
The API works without it: see <a href="/docs">/docs</a>.</p></body></html>`;

type CachedFile = { mtimeMs: number; size: number; body: Buffer; etag: string };

/**
 * Serves the explorer page at `/` (`web/dist`: index.html, hashed /assets/*, top-level files such
 * as favicon.svg) and `GET /web-config.json` → `{ demoKey?, logoHosts? }`. None of these need an
 * API key.
 * Assets are sent brotli- or gzip-compressed when web/build.ts wrote a `.br`/`.gz` beside them.
 */
export function registerWeb(app: FastifyInstance, options: WebOptions = {}): void {
  const distDir = path.resolve(options.distDir ?? defaultWebDistDir);
  const cache = new Map<string, CachedFile>();
  const logoHosts = [...(options.logoHosts ?? [])];
  const policy = contentSecurityPolicy(logoHosts);

  /** Reads a file of the build, from memory while its size and mtime are unchanged. */
  const load = async (file: string): Promise<CachedFile | undefined> => {
    const info = await stat(file).catch(() => undefined);
    if (!info?.isFile()) return undefined;
    const hit = cache.get(file);
    if (hit && hit.mtimeMs === info.mtimeMs && hit.size === info.size) return hit;
    const body = await readFile(file);
    const etag = `"${createHash("sha1").update(body).digest("base64url").slice(0, 22)}"`;
    const entry = { mtimeMs: info.mtimeMs, size: info.size, body, etag };
    cache.set(file, entry);
    return entry;
  };

  /** The absolute path of `relative` inside the build, or undefined when it would leave it. */
  const inside = (relative: string): string | undefined => {
    if (
      relative.includes("\0") ||
      relative.split(/[\\/]/).some((part) => part === ".." || part.startsWith("."))
    ) {
      return undefined;
    }
    const file = path.resolve(distDir, relative);
    return file.startsWith(distDir + path.sep) ? file : undefined;
  };

  /**
   * Sends a file of the build; false when there is none, for the caller to answer. It returns no
   * reply on purpose: a FastifyReply is a thenable that settles when the answer has gone out, so
   * an async function returning one resolves to undefined, and the caller used to take a sent
   * page for a missing one and send a second answer (logged "Reply was already sent", with a 503
   * or 404 in /metrics for a page that went out as 200).
   */
  const send = async (
    request: FastifyRequest,
    reply: FastifyReply,
    relative: string,
    headers: Record<string, string>,
  ): Promise<boolean> => {
    const file = inside(relative);
    const entry = file ? await load(file) : undefined;
    if (!file || !entry) return false;
    reply.headers({
      "content-type": contentTypes[path.extname(file)] ?? "application/octet-stream",
      "x-content-type-options": "nosniff",
      etag: entry.etag,
      vary: "accept-encoding",
      ...headers,
    });
    if (request.headers["if-none-match"] === entry.etag) {
      reply.code(304).send();
      return true;
    }
    const accepted = String(request.headers["accept-encoding"] ?? "");
    for (const [encoding, suffix] of [
      ["br", ".br"],
      ["gzip", ".gz"],
    ] as const) {
      if (!new RegExp(`\\b${encoding}\\b`).test(accepted)) continue;
      const compressed = await load(file + suffix);
      // A stale compressed copy (older than the file) is never sent.
      if (compressed && compressed.mtimeMs >= entry.mtimeMs) {
        reply.header("content-encoding", encoding).send(compressed.body);
        return true;
      }
    }
    reply.send(entry.body);
    return true;
  };

  const notFound = (reply: FastifyReply, what: string) =>
    reply
      .code(404)
      .type("application/json; charset=utf-8")
      .send({ statusCode: 404, error: "Not Found", message: `no file ${what}` });

  const page = async (request: FastifyRequest, reply: FastifyReply) => {
    const sent = await send(request, reply, "index.html", {
      "cache-control": "no-cache",
      "content-security-policy": policy,
      "referrer-policy": "no-referrer",
    });
    if (sent) return reply;
    return reply
      .code(503)
      .type("text/html; charset=utf-8")
      .header("cache-control", "no-store")
      .send(notBuiltPage);
  };

  app.get("/", page);
  app.get("/index.html", page);

  app.get<{ Params: { "*": string } }>("/assets/*", async (request, reply) => {
    const name = request.params["*"];
    // Names carry a content hash (Vite), so a file never changes under its name.
    const sent = await send(request, reply, `assets/${name}`, {
      "cache-control": "public, max-age=31536000, immutable",
    });
    return sent ? reply : notFound(reply, `/assets/${name}`);
  });

  app.get<{ Params: { file: string } }>(
    "/:file(^[A-Za-z0-9][A-Za-z0-9_-]*\\.(?:svg|png|ico|webp|txt|webmanifest)$)",
    async (request, reply) => {
      const sent = await send(request, reply, request.params.file, {
        "cache-control": "public, max-age=3600",
      });
      return sent ? reply : notFound(reply, `/${request.params.file}`);
    },
  );

  // No CORS here (config.cors false): a page of another origin cannot read this answer.
  app.get("/web-config.json", { config: { cors: false } }, async (request, reply) => {
    const config: { demoKey?: string; logoHosts?: string[] } =
      options.demoKey && mayHaveDemoKey(request) ? { demoKey: options.demoKey } : {};
    if (logoHosts.length > 0) config.logoHosts = logoHosts;
    return reply
      .header("cache-control", "no-store")
      .header("vary", "origin, host, sec-fetch-site")
      .type("application/json; charset=utf-8")
      .send(config);
  });
}

const LOOPBACK_NAME = /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|localhost|\[::1\])(:\d+)?$/i;
const LOOPBACK_ADDRESS = /^(127\.|::1$|::ffff:127\.)/;

/**
 * Only the explorer page, from this server's own origin on a loopback listener, gets the demo
 * key: the connection arrived on a loopback address, the Host names a loopback address (a
 * DNS-rebinding page would send its own name), and the browser says the fetch is same-origin
 * (no foreign Origin, no cross-site Sec-Fetch-Site).
 */
function mayHaveDemoKey(request: FastifyRequest): boolean {
  const local = request.raw.socket.localAddress ?? "";
  const host = request.headers.host ?? "";
  if (!LOOPBACK_ADDRESS.test(local) || !LOOPBACK_NAME.test(host)) return false;
  const site = request.headers["sec-fetch-site"];
  if (site !== undefined && site !== "same-origin" && site !== "none") return false;
  const origin = request.headers.origin;
  if (origin !== undefined) {
    let originHost: string;
    try {
      originHost = new URL(origin).host;
    } catch {
      return false;
    }
    if (originHost.toLowerCase() !== host.toLowerCase()) return false;
  }
  return true;
}
