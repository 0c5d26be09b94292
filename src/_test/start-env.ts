import { freePort } from "./free-port.js";

/**
 * The environment these tests give `tokenmarket start`: the user's, without what would pick
 * another database or configuration; free ports for the API, the embedded Postgres and the
 * devnet; the Postgres data in `dataDir`; JSON logs from info up. `extra` adds variables.
 */
export async function startEnv(dataDir: string, extra: Record<string, string> = {}) {
  const ports = { api: await freePort(), pg: await freePort(), devnet: await freePort() };
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    TOKENMARKET__database__embedded__dataDir: dataDir,
    TOKENMARKET__database__embedded__port: String(ports.pg),
    TOKENMARKET__api__port: String(ports.api),
    TOKENMARKET__devnet__port: String(ports.devnet),
    LOG_LEVEL: "info",
    LOG_FORMAT: "json",
    ...extra,
  };
  delete env.DATABASE_URL;
  delete env.TOKENMARKET_CONFIG;
  return { env, ports };
}
