/**
 * A miss whose only difference from the nearest recording is the port of a
 * loopback host (`:host` `http://127.0.0.1:53811` recorded, `:53907` now) is
 * a test fake on a random port, not a changed request: say exactly that and
 * name the fix (`createFetch`'s `hostAliases`), instead of leaving a reader
 * to spot one changed number in a params diff.
 */
import type { ModelManifest } from "../identity/index.js";

const LOOPBACK = /^(?:localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i;

/**
 * The hint, or undefined when the two manifests differ in anything but a
 * loopback port.
 *
 * @example
 * loopbackPortHint(recorded, now)
 * // "Only the loopback port differs: :host was http://127.0.0.1:53811, now http://127.0.0.1:53907 …"
 */
export function loopbackPortHint(recorded: ModelManifest, now: ModelManifest): string | undefined {
  const a = recorded.params?.[":host"];
  const b = now.params?.[":host"];
  if (typeof a !== "string" || typeof b !== "string" || a === b) return undefined;
  const ua = origin(a);
  const ub = origin(b);
  if (ua === undefined || ub === undefined) return undefined;
  if (!LOOPBACK.test(ua.hostname) || !LOOPBACK.test(ub.hostname)) return undefined;
  if (ua.protocol !== ub.protocol || ua.hostname !== ub.hostname || ua.port === ub.port)
    return undefined;
  // Everything else equal: the same manifest once `:host` is the same.
  const same = { ...now, params: { ...now.params, ":host": a } };
  if (JSON.stringify(sorted(same)) !== JSON.stringify(sorted(recorded))) return undefined;
  return `Only the loopback port differs: :host was ${a} when recorded, ${b} now (a local server on a random port, such as a test fake). Give it a fixed name in the identity with createFetch({ hostAliases: { "${ub.host}": "fake" } }) or hostAliases: (url) => (url.hostname === "${ub.hostname}" ? "fake" : undefined), then record once more (docs/integrations.md, hostAliases).`;
}

function origin(s: string): URL | undefined {
  try {
    const u = new URL(s);
    return u.origin === s ? u : undefined;
  } catch {
    return undefined;
  }
}

/** A JSON value with object keys in order, so two manifests compare as values. */
function sorted(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sorted);
  if (v === null || typeof v !== "object") return v;
  return Object.fromEntries(
    Object.keys(v)
      .sort()
      .map((k) => [k, sorted((v as Record<string, unknown>)[k])]),
  );
}
