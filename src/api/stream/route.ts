/**
 * GET /v1/stream: the WebSocket upgrade (@fastify/websocket) and its OpenAPI description. A plain
 * GET without the upgrade is a 426. An extension beyond the common token-market API.
 */
import websocket from "@fastify/websocket";
import type { FastifyInstance } from "fastify";
import { HttpError } from "../../internal/errors.js";
import { errorExamples } from "../schemas.js";
import { CLOSE } from "./connection.js";
import { MAX_FRAME_BYTES } from "./messages.js";
import { StreamClientMessage, StreamServerMessage } from "./schemas.js";
import type { Stream } from "./stream.js";

/** The 426 of a plain GET. */
const NOT_A_WEBSOCKET =
  "GET /v1/stream is a WebSocket: connect with Upgrade: websocket (for example new WebSocket(url))";

const DESCRIPTION = `A WebSocket (ours beyond the specification): live trades, candles and prices, pushed as the indexer commits them. Messages are JSON text frames; their schemas are \`StreamClientMessage\` and \`StreamServerMessage\` under \`components.schemas\`.

**Authentication.** Send \`x-api-key\` with the upgrade, or (browsers) send \`{"type":"auth","api_key":"…"}\` as the first message within 10 s. A wrong or missing key is answered \`{"type":"error","statusCode":403,…}\` and the connection is closed with code 4403.

**Subscriptions** take the REST parameters of the same data and are acknowledged \`{"type":"subscribed",…}\`:
- \`{"type":"subscribe","channel":"trades","pair_id":"…","asset_id":"…"}\` → \`{"type":"trade","asset_id":"…","data":<the /api/v1/trades record>}\` for every trade of the blocks after the acknowledgement's \`block\`, oldest first;
- \`{"type":"subscribe","channel":"candles","pair_id":"…","asset_id":"…","interval":"1m"}\` → \`{"type":"candle","pair_id","asset_id","interval","currency","data":<the /api/v1/candles record>}\`: the candle of the interval holding the pair's latest trade, now and each time it changes;
- \`{"type":"subscribe","channel":"prices","asset_ids":"id,id"}\` → \`{"type":"price","data":<the /api/v1/assets record>}\` now and each time it changes;
- \`{"type":"unsubscribe",…same fields}\` → \`{"type":"unsubscribed",…}\`; \`{"type":"ping"}\` → \`{"type":"pong"}\`.

**Reorgs.** \`{"type":"rollback","chain":1,"block":N}\` says the data after block N was undone; the corrected data follows it.

**Errors** are \`{"type":"error","statusCode":400|403|404|429,"message":"…"}\`, worded as the HTTP errors (a bad subscription is a 400 naming the field, an unknown pair a 404, a limit a 429). Limits (\`api.stream\`, per API process): connections per key (10; one more is closed with 4429), subscriptions per connection (100), messages per second (50), message size (16 KiB; frames over 1 MiB close with 1009). A client that does not read (more than \`maxBufferedBytes\`, 1 MiB, waiting) is sent nothing more and closed with 4008, reason \`slow consumer: …\`. Close codes: 1001 server stopping, 1009 frame too large, 1011 key check failed, 4008 slow consumer, 4403 authentication, 4429 too many connections or failed key checks.`;

/**
 * Registers the WebSocket plugin, the message schemas and the upgrade route on `app` (the root of
 * the base listener, before any other route, so that an upgrade to any other path is closed by the
 * plugin instead of left open); `stream` is started when the server is ready and its connections
 * are closed (1001) when it closes.
 */
export function registerStream(app: FastifyInstance, stream: Stream): void {
  app.addSchema(StreamClientMessage);
  app.addSchema(StreamServerMessage);
  void app.register(websocket, {
    options: { maxPayload: MAX_FRAME_BYTES },
    // Closes the stream's own connections with 1001 first, then the plugin's server.
    preClose(done) {
      stream.stop();
      this.websocketServer.close();
      done();
    },
    // Socket errors (a client vanishing, a protocol violation) end that connection only; the
    // WebSocket layer has already answered a protocol violation with its close code (1002, 1009).
    errorHandler(error, socket, request) {
      request.log.debug({ err: error }, "stream socket error");
      if (socket.readyState === socket.OPEN) socket.close(CLOSE.internal, "socket error");
    },
  });
  app.addHook("onReady", async () => stream.start());
  void app.register(async (scope) => routes(scope, stream));
}

function routes(app: FastifyInstance, stream: Stream) {
  app.route({
    method: "GET",
    url: "/v1/stream",
    schema: {
      tags: ["stream"],
      summary: "Live trades, candles and prices (WebSocket)",
      description: DESCRIPTION,
      security: [{ apiKey: [] }],
      response: {
        101: {
          description:
            "Switching Protocols: the connection is a WebSocket carrying `StreamClientMessage` and `StreamServerMessage` JSON text frames.",
          type: "null",
        },
        426: {
          $ref: "ErrorBody",
          description: "A plain GET, without `Upgrade: websocket`.",
          "x-examples": errorExamples(426, [{ summary: "Plain GET", message: NOT_A_WEBSOCKET }]),
        },
      },
    },
    handler: async () => {
      throw new HttpError(426, NOT_A_WEBSOCKET, { upgrade: "websocket" });
    },
    wsHandler: (socket, request) => {
      const header = request.headers["x-api-key"];
      stream.accept(socket, {
        apiKey: typeof header === "string" ? header : undefined,
        address: request.ip,
      });
    },
  });
}
