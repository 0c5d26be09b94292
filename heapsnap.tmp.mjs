// Temporary: takes a heap snapshot of a process whose inspector is open, summarises by constructor.
import WebSocket from "ws";
import { writeFileSync } from "node:fs";
const port = process.argv[2] ?? "9229";
const list = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json();
const ws = new WebSocket(list[0].webSocketDebuggerUrl, { maxPayload: 2 ** 31 });
await new Promise((r) => ws.on("open", r));
let id = 0;
const chunks = [];
const send = (method, params = {}) => new Promise((resolve) => {
  const my = ++id;
  const on = (data) => { const m = JSON.parse(data); if (m.id === my) { ws.off("message", on); resolve(m.result); } };
  ws.on("message", on);
  ws.send(JSON.stringify({ id: my, method, params }));
});
ws.on("message", (data) => { const m = JSON.parse(data); if (m.method === "HeapProfiler.addHeapSnapshotChunk") chunks.push(m.params.chunk); });
await send("HeapProfiler.enable");
await send("HeapProfiler.collectGarbage");
await send("HeapProfiler.takeHeapSnapshot", { reportProgress: false });
const snap = JSON.parse(chunks.join(""));
ws.close();
const m = snap.snapshot.meta; const nf = m.node_fields.length; const types = m.node_types[0];
const nodes = snap.nodes, strings = snap.strings;
const ti = m.node_fields.indexOf("type"), ni = m.node_fields.indexOf("name"), si = m.node_fields.indexOf("self_size");
const agg = new Map(); let total = 0;
for (let i = 0; i < nodes.length; i += nf) {
  const type = types[nodes[i + ti]]; const name = type === "object" || type === "closure" ? strings[nodes[i + ni]] : `(${type})`;
  const s = nodes[i + si]; total += s;
  const a = agg.get(name) ?? [0, 0]; a[0] += s; a[1]++; agg.set(name, a);
}
console.log("total self MB", (total / 1e6).toFixed(1));
for (const [k, [s, c]] of [...agg].sort((a, b) => b[1][0] - a[1][0]).slice(0, 35)) console.log((s / 1e6).toFixed(1).padStart(8), String(c).padStart(9), k.slice(0, 60));
// duplicates among string nodes
const vi = m.node_fields.indexOf("name");
const dup = new Map(); let strBytes = 0;
for (let i = 0; i < nodes.length; i += nf) {
  if (types[nodes[i + ti]] !== "string") continue;
  const v = strings[nodes[i + vi]]; const s = nodes[i + si];
  const d = dup.get(v) ?? [0, 0]; d[0]++; d[1] += s; dup.set(v, d);
}
let dupBytes = 0, dupCount = 0; const byLen = new Map();
for (const [v, [c, s]] of dup) { if (c > 1) { dupBytes += s - s / c; dupCount += c - 1; } const L = v.length; const b = byLen.get(L) ?? [0, 0]; b[0] += c; b[1] += s; byLen.set(L, b); }
console.log("distinct", dup.size, "duplicate copies", dupCount, "dup MB", (dupBytes / 1e6).toFixed(1));
console.log([...byLen].sort((a, b) => b[1][1] - a[1][1]).slice(0, 8).map(([L, [c, s]]) => `len ${L}: ${c} strings ${(s / 1e6).toFixed(1)} MB`).join("\n"));
console.log([...dup].sort((a,b)=>b[1][0]-a[1][0]).slice(0,5).map(([v,[c]])=>`${c} × ${v.slice(0,50)}`).join("\n"));
