/**
 * Passwords in store URLs never reach a message: not in `store.url`, not in
 * a TypeError for a malformed URL, not in a StoreError (nor its causes) when
 * a real Redis or Postgres URL fails to connect, whatever characters the
 * password holds (`/`, `#`, `?`, `@`, `%`, `:`), typed raw or percent-encoded.
 */
import { inspect } from "node:util";
import { describe, expect, it } from "vitest";
import { StoreError } from "../../src/errors.js";
import { openStore } from "../../src/store/open.js";
import { parseStoreUrl, redactUrl } from "../../src/store/url.js";
import { freePort } from "../helpers/free-port.js";

/** Each holds a character that ends the authority of a WHATWG URL, or a percent sign. */
const PASSWORDS = [
  "pa/ss-SECRET1",
  "pa#ss-SECRET2",
  "pa?ss-SECRET3",
  "p@ss-SECRET4",
  "pa%ss-SECRET5",
  "a/b#c?d@e:SECRET6",
];

/** The parts of a password that must not show: each piece between special characters. */
function pieces(password: string): string[] {
  return password.split(/[/#?@%:]/).filter((p) => p.length >= 4);
}

function expectClean(text: string, password: string): void {
  for (const piece of pieces(password))
    expect(text, `"${piece}" of ${password}`).not.toContain(piece);
}

describe("redactUrl with hostile passwords", () => {
  for (const password of PASSWORDS) {
    for (const scheme of ["redis", "rediss", "postgres", "postgresql"]) {
      it(`${scheme}: ${password}`, () => {
        const url = `${scheme}://user:${password}@db.local:1234/0?sslmode=require`;
        const redacted = redactUrl(url);
        expectClean(redacted, password);
        expect(redacted).toBe(`${scheme}://db.local:1234/0`);
        const location = parseStoreUrl(url);
        expect(location.url).toBe(`${scheme}://db.local:1234/0`);
      });
    }
  }

  it("redacts malformed URLs too, and the TypeError about them", () => {
    for (const password of PASSWORDS) {
      for (const url of [
        `redis://u:${password}@`,
        `redis://u:${password}@h:notaport`,
        `postgres://u:${password}@h:99999/db`,
        `redis:u:${password}@h`,
        `mysql://u:${password}@h/db`,
      ]) {
        expectClean(redactUrl(url), password);
        let error: unknown;
        try {
          parseStoreUrl(url);
        } catch (e) {
          error = e;
        }
        expect(error, url).toBeInstanceOf(TypeError);
        expectClean(inspect(error, { depth: 10 }), password);
      }
    }
  });
});

describe("connection failures never print the password", () => {
  for (const scheme of ["redis", "postgres"]) {
    for (const password of PASSWORDS) {
      it(`${scheme}: ${password}`, async () => {
        // Nothing listens on a fresh free port: the connection is refused.
        const port = await freePort();
        const store = openStore(`${scheme}://user:${password}@127.0.0.1:${port}/0`);
        expectClean(store.url, password);
        expect(store.url).toBe(`${scheme}://127.0.0.1:${port}/0`);
        const error = await store.get("k").then(
          () => undefined,
          (e: unknown) => e,
        );
        await store.close();
        expect(error).toBeInstanceOf(StoreError);
        expect((error as StoreError).message).toMatch(/ECONNREFUSED|connect/i);
        // The message, the stack, and every cause down the chain.
        expectClean(inspect(error, { depth: 20 }), password);
        expectClean(String((error as Error).stack), password);
      });
    }
  }
});
