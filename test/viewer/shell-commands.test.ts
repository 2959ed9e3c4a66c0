/**
 * The commands the viewer prints (entry pages: show, explain, prune with
 * `--store`/`--cassette`) are quoted for the shell: recorded under a folder
 * whose name has spaces, quotes, `$`, backticks and `;`, each printed
 * command is read back by a real `/bin/sh` into the words the CLI would
 * get, and running those words finds the entry. Checked in the live
 * viewer's HTML and in the export, after HTML escaping and unescaping.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { showCommand } from "../../src/cli/commands/show.js";
import { exportReport, startViewer, type Viewer } from "../../src/viewer/index.js";
import { fakeIo } from "../cli/in-process.js";
import { HOSTILE, shellWords } from "../helpers/shell-words.js";
import { get, recordDemo } from "./fixtures.js";

/** The text of every `<pre class="code">` in a `.cmds` panel, HTML-unescaped as a browser would. */
function printedCommands(page: string): string[] {
  const panels = page.match(/<div class="panel cmds">[\s\S]*?<\/div>/g) ?? [];
  return panels.flatMap((p) =>
    [...p.matchAll(/<pre class="code">([\s\S]*?)<\/pre>/g)].map((m) => unescapeHtml(m[1]!)),
  );
}

function unescapeHtml(text: string): string {
  return text.replace(/&(lt|gt|quot|amp|#39|#96);/g, (_, e: string) =>
    e === "lt"
      ? "<"
      : e === "gt"
        ? ">"
        : e === "quot"
          ? '"'
          : e === "amp"
            ? "&"
            : e === "#39"
              ? "'"
              : "`",
  );
}

describe("commands the viewer prints, for a store under a hostile path", () => {
  let demo: { dir: string; store: string };
  let viewer: Viewer;
  let cookie: string;
  let host: string;

  beforeAll(async () => {
    demo = await recordDemo(HOSTILE);
    expect(demo.store).toContain(HOSTILE);
    viewer = await startViewer(
      { store: demo.store },
      { token: "t0ken-for-tests_0123456789abcdef" },
    );
    host = `127.0.0.1:${viewer.port}`;
    const first = await get(viewer.port, `/?token=${viewer.token}`, { host });
    cookie = String(first.headers["set-cookie"]).split(";")[0]!;
  }, 60_000);

  afterAll(async () => {
    await viewer?.close();
  });

  async function entryPage(): Promise<{ page: string; key: string }> {
    const overview = await get(viewer.port, "/", { host, cookie });
    const href = overview.body.match(/href="(\/entry\/[^"]+)"/)![1]!;
    const page = await get(viewer.port, href, { host, cookie });
    expect(page.status).toBe(200);
    return { page: page.body, key: decodeURIComponent(href.slice("/entry/".length)) };
  }

  it("quotes --store so /bin/sh gives the CLI the store URL as one word", async () => {
    const { page } = await entryPage();
    const commands = printedCommands(page);
    expect(commands).toHaveLength(3);
    for (const command of commands) {
      const words = shellWords(command);
      expect(words.slice(0, 2)).toEqual(["npx", "invocache"]);
      expect(words.slice(-2)).toEqual(["--store", demo.store]);
    }
  });

  it("the printed show command, run as the shell splits it, finds the entry", async () => {
    const { page, key } = await entryPage();
    const show = printedCommands(page).find((c) => c.startsWith("npx invocache show "))!;
    const words = shellWords(show);
    const io = fakeIo(demo.dir);
    expect(await showCommand.run([...words.slice(3), "--json"], io)).toBe(0);
    const id = key.split(":")[2]!;
    expect(JSON.parse(io.stdout()).id).toBe(id);
  });

  it("the export prints the same quoted commands", async () => {
    const file = join(demo.dir, "report.html");
    await exportReport({ store: demo.store }, file);
    const commands = printedCommands(readFileSync(file, "utf8"));
    expect(commands.length).toBeGreaterThanOrEqual(3);
    for (const command of commands)
      expect(shellWords(command).slice(-2)).toEqual(["--store", demo.store]);
  });

  it("quotes --cassette the same way", async () => {
    const { cassetteStore } = await import("../../src/cassette/index.js");
    const { createRecorder } = await import("../../src/recorder/index.js");
    const folder = join(demo.dir, "cassettes");
    const rec = createRecorder({ store: cassetteStore(join(folder, "a b.yaml")), mode: "record" });
    await rec.call({ role: "r", model: "m", prompt: "p" }, async () => "x");
    await rec.close();
    const file = join(demo.dir, "cassettes.html");
    await exportReport({ cassette: folder }, file);
    const commands = printedCommands(readFileSync(file, "utf8"));
    expect(commands).toHaveLength(3);
    for (const command of commands)
      expect(shellWords(command).slice(-2)).toEqual(["--cassette", folder]);
  });
});
