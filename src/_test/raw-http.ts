import { createConnection } from "node:net";

export type RawAnswer = { status: number; headers: Record<string, string>; body: string; raw: string };

/**
 * Sends `request` byte for byte over a new TCP connection (for what fetch cannot send: no Host,
 * odd Expect headers, `OPTIONS *`) and parses the first answer; chunked bodies are decoded.
 */
export function rawHttp(port: number, request: string, timeoutMs = 5000): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = createConnection(port, "127.0.0.1");
    let data = "";
    const timer = setTimeout(() => finish(), timeoutMs);
    const finish = () => {
      clearTimeout(timer);
      socket.destroy();
      const end = data.indexOf("\r\n\r\n");
      if (end < 0) return reject(new Error(`no HTTP answer: ${JSON.stringify(data.slice(0, 200))}`));
      const [statusLine = "", ...lines] = data.slice(0, end).split("\r\n");
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(":");
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      let body = data.slice(end + 4);
      if (headers["transfer-encoding"] === "chunked") body = dechunk(body);
      else if (headers["content-length"]) body = body.slice(0, Number(headers["content-length"]));
      resolve({ status: Number(statusLine.split(" ")[1]), headers, body, raw: data });
    };
    socket.on("data", (chunk) => {
      data += chunk.toString("utf8");
      if (isComplete(data)) finish();
    });
    socket.on("end", finish);
    socket.on("error", finish);
    socket.write(request);
  });
}

function isComplete(data: string): boolean {
  const end = data.indexOf("\r\n\r\n");
  if (end < 0) return false;
  const head = data.slice(0, end).toLowerCase();
  const body = data.slice(end + 4);
  const length = /\r\ncontent-length:\s*(\d+)/.exec(head);
  if (length) return Buffer.byteLength(body) >= Number(length[1]);
  if (head.includes("transfer-encoding: chunked")) return body.endsWith("0\r\n\r\n");
  return false;
}

function dechunk(body: string): string {
  let out = "";
  let rest = body;
  for (;;) {
    const line = rest.indexOf("\r\n");
    if (line < 0) return out;
    const size = Number.parseInt(rest.slice(0, line), 16);
    if (!size) return out;
    out += rest.slice(line + 2, line + 2 + size);
    rest = rest.slice(line + 2 + size + 2);
  }
}
