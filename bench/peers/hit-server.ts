/**
 * A bare node:http server answering from `createFetchAnswerer` on one store,
 * with none of `invocache proxy`'s own code (no upstream table, context
 * headers, sessions, runs, abort wiring or error shapes): what a server
 * pays for the recorder's hit alone. Used by bench/peers/proxy-process-split.ts.
 *   node --import tsx bench/peers/hit-server.ts <store URL | cassette.yaml> <upstream URL>
 * `/<name>/<path>` is answered as `<upstream URL>/<path>` (the proxy's
 * addressing, so its recordings hit); prints its address, like the proxy.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createFetchAnswerer } from "../../src/adapters/index.js";
import { cassetteStore, createRecorder, openStore } from "../../src/index.js";

const [where, upstream] = process.argv.slice(2);
if (where === undefined || upstream === undefined) {
  process.stderr.write("usage: hit-server.ts <store URL | cassette.yaml> <upstream URL>\n");
  process.exit(2);
}
const store = where.endsWith(".yaml") ? cassetteStore(where) : openStore(where);
const recorder = createRecorder({ store, mode: "replay", env: {} });
const { answer } = createFetchAnswerer({
  recorder,
  fetch: async () => {
    throw new Error("hit-server: a replay went upstream");
  },
});

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", async () => {
    try {
      const text = Buffer.concat(chunks).toString("utf8");
      const path = (req.url ?? "/").replace(/^\/[^/]+/, "");
      const a = await answer(
        upstream + path,
        { method: "POST", headers: { "content-type": "application/json" }, body: text },
        { value: JSON.parse(text) },
      );
      if (a instanceof Response) {
        const body = await a.text();
        res.writeHead(a.status, { "content-type": "application/json" });
        res.end(body);
        return;
      }
      res.writeHead(a.status, { ...a.headers, "content-length": Buffer.byteLength(a.text) });
      res.end(a.text);
    } catch (error) {
      res.writeHead(500, { "content-type": "text/plain" });
      res.end(String(error));
    }
  });
});
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
});
process.on("SIGTERM", () => {
  server.close();
  void recorder.close().then(() => store.close());
});
