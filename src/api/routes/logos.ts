import { existsSync, readdirSync, readFileSync } from "node:fs";
import * as path from "node:path";
import type { FastifyInstance } from "fastify";
import { notFound } from "../../internal/errors.js";

/**
 * GET /logos/:file: the demo tokens' small SVG logos (web/public/logos/), read once at start and
 * served by this server, so `project_info.logo_url` never points at an external host. No key.
 */
export function registerLogos(app: FastifyInstance, root: string) {
  const dir = path.join(root, "web", "public", "logos");
  const logos = new Map<string, Buffer>();
  if (existsSync(dir)) {
    for (const name of readdirSync(dir)) {
      if (/^[a-z0-9-]+\.svg$/.test(name)) logos.set(name, readFileSync(path.join(dir, name)));
    }
  }
  app.get<{ Params: { file: string } }>(
    "/logos/:file",
    { schema: { hide: true } },
    async (request, reply) => {
      const logo = logos.get(request.params.file);
      if (!logo) throw notFound(`no logo ${request.params.file.slice(0, 60)}`);
      return reply
        .type("image/svg+xml")
        .header("cache-control", "public, max-age=86400")
        .header("x-content-type-options", "nosniff")
        .header("content-security-policy", "default-src 'none'; style-src 'unsafe-inline'")
        .send(logo);
    },
  );
}
