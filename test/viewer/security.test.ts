/**
 * The viewer's request checks and escaping, with plain HTTP requests to a
 * real viewer on loopback: a foreign Host (DNS rebinding) or Origin is
 * refused, a request without the token is refused, the token becomes a
 * cookie, writes are refused, and a prompt containing `<script>` is shown
 * as text on every page that shows it.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRecorder } from "../../src/recorder/index.js";
import { escapeHtml, html } from "../../src/viewer/escape.js";
import { startViewer, type Viewer } from "../../src/viewer/index.js";
import { tempDir } from "../helpers/tmp.js";
import { get } from "./fixtures.js";

const EVIL = `<script>alert("pwned")</script><img src=x onerror=alert(1)>`;
let viewer: Viewer;
let host: string;
let cookie: string;
let key: string;

beforeAll(async () => {
  const dir = tempDir("view-sec");
  const store = `sqlite://${join(dir, "cache.sqlite")}`;
  const recorder = createRecorder({ store, namespace: "sec", mode: "record" });
  await recorder.run(
    async () => {
      await recorder.call(
        { role: `planner${EVIL}`, model: "m<b>1</b>", prompt: `Please ${EVIL} now`, task: EVIL },
        async () => ({ text: `answer ${EVIL}` }),
        { attempt: 0 },
      );
    },
    { runId: `r-${"<i>x</i>"}` },
  );
  key = `sec:e:${recorder.last!.id}:0`;
  await recorder.close();
  viewer = await startViewer({ store }, { token: "t0ken-for-tests_0123456789abcdef" });
  host = `127.0.0.1:${viewer.port}`;
  const first = await get(viewer.port, `/?token=${viewer.token}`, { host });
  cookie = String(first.headers["set-cookie"]).split(";")[0]!;
});

afterAll(async () => {
  await viewer?.close();
});

describe("escaping", () => {
  it("escapes every interpolated value", () => {
    expect(escapeHtml(`<a href="x" onclick='y'>&</a>`)).toBe(
      "&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;&lt;/a&gt;",
    );
    expect(html`<p title="${'"><script>'}">${EVIL}</p>`.value).not.toContain("<script>");
  });

  for (const [name, path] of [
    ["overview", () => "/"],
    ["entry", () => `/entry/${encodeURIComponent(key)}`],
    ["run", () => `/run/sec/${encodeURIComponent("r-<i>x</i>")}`],
  ] as const) {
    it(`shows <script> in a prompt as text on the ${name} page`, async () => {
      const r = await get(viewer.port, path(), { host, cookie });
      expect(r.status).toBe(200);
      // The page's own script is the only one, and it carries the nonce.
      const scripts = r.body.match(/<script\b[^>]*>/g) ?? [];
      expect(scripts).toHaveLength(1);
      expect(scripts[0]).toMatch(/^<script nonce="[^"]+">$/);
      expect(r.body).not.toContain("<img src=x");
      expect(r.body).not.toContain("<i>x</i>");
      expect(r.body).not.toContain("<b>1</b>");
      if (name !== "run")
        expect(r.body).toContain("&lt;script&gt;alert(&quot;pwned&quot;)&lt;/script&gt;");
    });
  }
});

describe("request checks", () => {
  it("refuses a foreign Host (DNS rebinding)", async () => {
    const r = await get(viewer.port, "/", { host: `evil.example:${viewer.port}`, cookie });
    expect(r.status).toBe(403);
    expect(r.body).toContain("refused Host");
    expect(r.body).not.toContain("planner");
  });

  it("refuses a missing Host and the right host on another port", async () => {
    // Node's HTTP parser already answers 400 to an HTTP/1.1 request without Host.
    const none = await get(viewer.port, "/", { cookie });
    expect([400, 403]).toContain(none.status);
    expect(none.body).not.toContain("planner");
    expect((await get(viewer.port, "/", { host: "127.0.0.1:1", cookie })).status).toBe(403);
  });

  it("refuses a foreign Origin", async () => {
    const r = await get(viewer.port, "/", { host, cookie, origin: "http://evil.example" });
    expect(r.status).toBe(403);
    expect(r.body).toContain("refused Origin");
  });

  it("accepts its own Origin and localhost", async () => {
    expect((await get(viewer.port, "/", { host, cookie, origin: `http://${host}` })).status).toBe(
      200,
    );
    expect((await get(viewer.port, "/", { host: `localhost:${viewer.port}`, cookie })).status).toBe(
      200,
    );
  });

  it("refuses a request without the token, or with a wrong one", async () => {
    const none = await get(viewer.port, "/", { host });
    expect(none.status).toBe(401);
    expect(none.body).not.toContain("planner");
    expect((await get(viewer.port, "/?token=wrong", { host })).status).toBe(401);
    expect((await get(viewer.port, "/", { host, cookie: "invocache_view=wrong" })).status).toBe(
      401,
    );
  });

  it("trades the URL token for an HttpOnly SameSite=Strict cookie and drops it from the URL", async () => {
    const r = await get(viewer.port, `/misses?token=${viewer.token}`, { host });
    expect(r.status).toBe(303);
    expect(r.headers.location).toBe("/misses");
    expect(String(r.headers["set-cookie"])).toMatch(/HttpOnly; SameSite=Strict/);
  });

  it("is read-only", async () => {
    for (const method of ["POST", "PUT", "DELETE", "PATCH"]) {
      expect((await get(viewer.port, "/", { host, cookie }, method)).status).toBe(405);
    }
  });

  it("sends a policy that allows only its own nonce-bearing script", async () => {
    const r = await get(viewer.port, "/", { host, cookie });
    const csp = String(r.headers["content-security-policy"]);
    expect(csp).toMatch(/default-src 'none'/);
    expect(csp).toMatch(/script-src 'nonce-/);
    expect(r.headers["x-frame-options"]).toBe("DENY");
  });

  it("listens on 127.0.0.1 only", () => {
    expect(viewer.url.startsWith(`http://127.0.0.1:${viewer.port}/?token=`)).toBe(true);
  });
});
