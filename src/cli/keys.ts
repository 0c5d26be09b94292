import type { Config } from "../config/schema.js";
import type { Logger } from "../internal/logger.js";
import { openDatabase } from "../runtime/database.js";
import { ApiKeyError, createApiKey, findKeyToRevoke, listApiKeys, revokeApiKey } from "../store/api-keys.js";

/** `tokenmarket keys create|list|revoke` and `tokenmarket migrate`. */
export async function runKeys(options: {
  config: Config;
  logger: Logger;
  args: string[];
  name?: string | undefined;
}): Promise<number> {
  const [action, target] = options.args;
  if (!["create", "list", "revoke", "migrate"].includes(action ?? "")) {
    console.error("usage: tokenmarket keys create --name NAME | keys list | keys revoke ID|NAME|PREFIX");
    return 2;
  }
  if (action === "create" && !options.name) {
    console.error("tokenmarket keys create: --name is required");
    return 2;
  }
  if (action === "revoke" && !target) {
    console.error("tokenmarket keys revoke: name the key by its id, name or prefix");
    return 2;
  }
  const database = await openDatabase({ config: options.config, logger: options.logger, attach: true });
  try {
    const { db } = database;
    if (action === "create") {
      const { id, key } = await createApiKey(db, options.name as string);
      console.log(`created key #${id} "${options.name}". It is shown this once; store it now:\n\n  ${key}\n`);
    } else if (action === "list") {
      const keys = await listApiKeys(db);
      if (keys.length === 0) console.log("no keys");
      for (const k of keys) {
        const state = k.revokedAt ? `revoked ${k.revokedAt.toISOString()}` : "active";
        const name = k.demo ? `${k.name} (demo)` : k.name;
        console.log(`#${k.id}\t${k.prefix}…\t${name}\tcreated ${k.createdAt.toISOString()}\t${state}`);
      }
    } else if (action === "revoke") {
      const revoked = await findKeyToRevoke(db, target as string);
      if (revoked === null || (await revokeApiKey(db, String(revoked.id))) === 0) {
        console.error(`no active key has the id, name or prefix "${target}" (see: tokenmarket keys list)`);
        return 1;
      }
      console.log(`revoked key #${revoked.id} "${revoked.name}"`);
    } else {
      console.log("database is up to date");
    }
    return 0;
  } catch (error) {
    if (!(error instanceof ApiKeyError)) throw error;
    console.error(`tokenmarket keys ${action}: ${error.message}`);
    return 1;
  } finally {
    await database.close();
  }
}
