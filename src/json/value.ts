/**
 * JSON values: the one type and the one set of checks every part of
 * invocache uses for "plain JSON" (stores, the recorder, identity params, the
 * cassette parser, the SDK codec). A leaf: imports nothing of ours.
 */

/** A JSON value as stored: what `JSON.parse(JSON.stringify(x))` returns. */
export type JsonValue =
  | null
  | boolean
  | number
  | string
  | JsonValue[]
  | { [key: string]: JsonValue };

const OBJECT_SOURCE = Function.prototype.toString.call(Object);

/**
 * Is `proto` the prototype of a plain object: null, our `Object.prototype`,
 * or another realm's (a node:vm context, an iframe), recognized as the end of
 * a prototype chain whose constructor is that realm's built-in `Object`.
 *
 * @example
 * isPlainPrototype(Object.getPrototypeOf({})) // true
 * isPlainPrototype(Date.prototype) // false
 */
export function isPlainPrototype(proto: unknown): boolean {
  if (proto === null || proto === Object.prototype) return true;
  if (typeof proto !== "object" || Object.getPrototypeOf(proto) !== null) return false;
  const ctor = Object.getOwnPropertyDescriptor(proto, "constructor")?.value;
  return typeof ctor === "function" && Function.prototype.toString.call(ctor) === OBJECT_SOURCE;
}

/**
 * Throw a `TypeError` naming `argName` and the JSON path unless `value` is a
 * plain JSON value whose `JSON.stringify` round trip is exact.
 *
 * Refused, because JSON would silently change them: `undefined`, functions,
 * symbols, bigints, `NaN`/`±Infinity` (become `null`), array holes (become
 * `null`), class instances such as `Date` or `Map` (become strings or `{}`),
 * and cycles. `-0` is accepted and comes back as `0`. Strings may contain
 * anything, lone surrogates included: `JSON.stringify` writes them as `\uD800`
 * escapes (ES2019 well-formed stringify), so they survive every backend.
 * Plain objects from another realm (node:vm, an iframe) are plain objects.
 *
 * @example
 * assertJsonValue({ a: [1, "x", null] }, "value") // ok
 * assertJsonValue({ when: new Date() }, "value") // TypeError: value.when is a Date…
 */
export function assertJsonValue(value: unknown, argName: string): asserts value is JsonValue {
  walk(value, argName, new Set(), false);
}

/**
 * A checked, deep-frozen copy of `value` (the same checks and messages as
 * {@link assertJsonValue}), made in one walk. A snapshot handed to
 * `jsonSnapshot` again, whole or as a subtree of a new value, is reused as
 * is: it was checked when made and, frozen, cannot have changed since. This
 * is how a value is walked once per write although both the recorder and the
 * store take a snapshot of it.
 *
 * @example
 * const s = jsonSnapshot({ a: [1] }, "value");
 * jsonSnapshot(s, "value") === s // true
 */
export function jsonSnapshot<T extends JsonValue>(value: T, argName: string): T;
export function jsonSnapshot(value: unknown, argName: string): JsonValue;
export function jsonSnapshot(value: unknown, argName: string): JsonValue {
  return walk(value, argName, new Set(), true);
}

/** Every tree {@link jsonSnapshot} made: checked and frozen, safe to share. */
const snapshots = new WeakSet<object>();

function walk(value: unknown, path: string, seen: Set<object>, copy: boolean): JsonValue {
  switch (typeof value) {
    case "string":
    case "boolean":
      return value;
    case "number":
      if (!Number.isFinite(value)) {
        throw new TypeError(
          `${path} is ${value}, which JSON cannot represent; store a finite number`,
        );
      }
      return value;
    case "object":
      break;
    default:
      throw new TypeError(`${path} is a ${typeof value}, which is not a JSON value`);
  }
  if (value === null) return null;
  if (snapshots.has(value)) return value as JsonValue;
  if (seen.has(value)) throw new TypeError(`${path} is a cycle; JSON values must be trees`);
  seen.add(value);
  let out: JsonValue;
  if (Array.isArray(value)) {
    const arr: JsonValue[] = copy ? new Array(value.length) : (value as JsonValue[]);
    for (let i = 0; i < value.length; i++) {
      if (!(i in value)) throw new TypeError(`${path}[${i}] is an array hole, not a JSON value`);
      const v = walk(value[i], `${path}[${i}]`, seen, copy);
      if (copy) arr[i] = v;
    }
    out = arr;
  } else {
    if (!isPlainPrototype(Object.getPrototypeOf(value))) {
      const name = (value as { constructor?: { name?: string } }).constructor?.name ?? "object";
      throw new TypeError(`${path} is a ${name}; store plain objects, arrays and primitives only`);
    }
    const obj: Record<string, JsonValue> = copy ? {} : (value as Record<string, JsonValue>);
    for (const key of Object.keys(value)) {
      const v = walk((value as Record<string, unknown>)[key], `${path}.${key}`, seen, copy);
      if (copy) {
        // defineProperty: a "__proto__" key stays an ordinary member.
        Object.defineProperty(obj, key, {
          value: v,
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
    }
    out = obj;
  }
  // A value may appear twice in a tree (shared, not cyclic): only ancestors count.
  seen.delete(value);
  if (copy) {
    Object.freeze(out);
    snapshots.add(out);
  }
  return out;
}

/**
 * Set `out[key] = value` as an own data property, also for `__proto__`
 * (which an assignment would take as the prototype): defineProperty for that
 * key only, since an assignment makes the same property of any other key
 * about 3x faster (this runs on every call's params and every cassette hit).
 */
export function setMember<V>(out: Record<string, V>, key: string, value: V): void {
  if (key === "__proto__") {
    Object.defineProperty(out, key, {
      value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  } else out[key] = value;
}

/**
 * Turn a value into a plain JSON value, as `JSON.stringify` would see it
 * (`toJSON` is honoured, `undefined` members are dropped), but refusing what
 * JSON would silently mangle: NaN/Infinity, BigInt, functions, symbols,
 * Map/Set and other class instances, cycles. Used for identity params, where
 * a caller's settings object may carry `toJSON`.
 *
 * @example
 * toJsonValue({ at: { toJSON: () => "x" }, gone: undefined }, "params") // { at: "x" }
 */
export function toJsonValue(value: unknown, path: string, seen = new Set<object>()): JsonValue {
  if (
    value !== null &&
    typeof value === "object" &&
    typeof (value as { toJSON?: unknown }).toJSON === "function"
  ) {
    value = (value as { toJSON: (key: string) => unknown }).toJSON(
      path.slice(path.lastIndexOf(".") + 1),
    );
  }
  switch (typeof value) {
    case "string":
    case "boolean":
      return value;
    case "number":
      if (!Number.isFinite(value))
        throw new TypeError(
          `${path} is ${value}, which JSON cannot represent; use null or a finite number`,
        );
      return value;
    case "object": {
      if (value === null) return null;
      if (seen.has(value))
        throw new TypeError(`${path} contains a cycle; params must be a tree of JSON values`);
      seen.add(value);
      try {
        if (Array.isArray(value)) {
          return Array.from(value, (v, i) => {
            if (v === undefined) throw new TypeError(`${path}[${i}] is undefined; use null`);
            return toJsonValue(v, `${path}[${i}]`, seen);
          });
        }
        const proto = Object.getPrototypeOf(value);
        if (!isPlainPrototype(proto)) {
          throw new TypeError(
            `${path} is a ${proto?.constructor?.name ?? "non-plain object"}; params must be plain JSON objects (convert it first)`,
          );
        }
        const out: Record<string, JsonValue> = {};
        const obj = value as Record<string, unknown>;
        // Object.keys then each value: what Object.entries reads, in its order.
        for (const k of Object.keys(obj)) {
          const v = obj[k];
          if (v === undefined) continue; // as JSON.stringify does
          // A string, boolean, null or finite number is itself: no path built
          // for it (params are mostly such settings, on every call).
          const t = typeof v;
          if (
            t === "string" ||
            t === "boolean" ||
            v === null ||
            (t === "number" && Number.isFinite(v))
          )
            setMember(out, k, v as JsonValue);
          else setMember(out, k, toJsonValue(v, `${path}.${k}`, seen));
        }
        return out;
      } finally {
        seen.delete(value);
      }
    }
    default:
      throw new TypeError(`${path} is a ${typeof value}, which is not a JSON value`);
  }
}

/**
 * A deep copy of a JSON value already known to be one (checked when it was
 * stored): fresh objects and arrays, shared strings. About 8× faster than
 * `structuredClone` on a 5 KB entry, which is what a cassette hit returns.
 * A `__proto__` member stays an own property, as `JSON.parse` makes it.
 * Recursive: callers bound the depth (stores refuse deeper values).
 *
 * @example
 * const copy = cloneJsonValue({ a: [1, { b: 2 }] });
 */
export function cloneJsonValue<T extends JsonValue>(value: T): T;
export function cloneJsonValue(value: JsonValue): JsonValue {
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) {
    const out: JsonValue[] = new Array(value.length);
    for (let i = 0; i < value.length; i++) out[i] = cloneJsonValue(value[i]!);
    return out;
  }
  const out: { [key: string]: JsonValue } = {};
  for (const key of Object.keys(value)) {
    setMember(out, key, cloneJsonValue(value[key]!));
  }
  return out;
}
