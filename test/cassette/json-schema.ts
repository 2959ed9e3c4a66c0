/**
 * A small JSON Schema (2020-12) validator for the keywords
 * docs/cassette-v1.schema.json uses, so the schema is tested without a new
 * dependency. It throws on any keyword it does not know, so the schema
 * cannot grow a rule this validator silently ignores.
 */
type Schema = { [keyword: string]: unknown };

const ANNOTATIONS = new Set(["$schema", "$id", "title", "description", "$defs"]);
const KNOWN = new Set([
  "anyOf",
  ...ANNOTATIONS,
  "$ref",
  "type",
  "const",
  "enum",
  "required",
  "additionalProperties",
  "properties",
  "items",
  "pattern",
  "minimum",
  "minLength",
  "maxLength",
  "minProperties",
]);

/** Errors of `value` against `schema` (empty when valid), as `path: why`. */
export function validate(root: Schema, value: unknown): string[] {
  const errors: string[] = [];
  check(root, root, value, "$", errors);
  return errors;
}

function typeOf(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : "number";
  return typeof v;
}

function check(root: Schema, schema: Schema, value: unknown, path: string, errors: string[]): void {
  for (const keyword of Object.keys(schema)) {
    if (!KNOWN.has(keyword))
      throw new Error(
        `schema keyword ${keyword} at ${path} is not supported by the test validator`,
      );
  }
  if (typeof schema.$ref === "string") {
    const name = /^#\/\$defs\/(.+)$/.exec(schema.$ref)?.[1];
    const target = name === undefined ? undefined : (root.$defs as Record<string, Schema>)[name];
    if (target === undefined) throw new Error(`unresolvable $ref ${schema.$ref}`);
    check(root, target, value, path, errors);
  }
  if (Array.isArray(schema.anyOf)) {
    // Tool manifests (kind "tool") are the second shape of a manifest.
    const passes = (schema.anyOf as Schema[]).some((alt) => {
      const errs: string[] = [];
      check(root, alt, value, path, errs);
      return errs.length === 0;
    });
    if (!passes) errors.push(`${path}: matches none of the allowed shapes`);
  }
  const t = typeOf(value);
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? (schema.type as string[]) : [schema.type as string];
    const ok = types.some((s) => s === t || (s === "number" && t === "integer"));
    if (!ok) return void errors.push(`${path}: is ${t}, expected ${types.join(" or ")}`);
  }
  if (t === "number" && !Number.isFinite(value)) errors.push(`${path}: is not finite`);
  if ("const" in schema && value !== schema.const)
    errors.push(`${path}: must be ${JSON.stringify(schema.const)}`);
  if (Array.isArray(schema.enum) && !schema.enum.includes(value))
    errors.push(`${path}: must be one of ${JSON.stringify(schema.enum)}`);
  if (typeof value === "string") {
    if (typeof schema.pattern === "string" && !new RegExp(schema.pattern, "u").test(value))
      errors.push(`${path}: does not match ${schema.pattern}`);
    if (typeof schema.minLength === "number" && [...value].length < schema.minLength)
      errors.push(`${path}: too short`);
    if (typeof schema.maxLength === "number" && [...value].length > schema.maxLength)
      errors.push(`${path}: too long`);
  }
  if (typeof value === "number" && typeof schema.minimum === "number" && value < schema.minimum)
    errors.push(`${path}: below ${schema.minimum}`);
  if (Array.isArray(value) && schema.items !== undefined) {
    value.forEach((item, i) => {
      check(root, schema.items as Schema, item, `${path}[${i}]`, errors);
    });
  }
  if (t === "object") {
    const obj = value as Record<string, unknown>;
    for (const key of (schema.required as string[] | undefined) ?? [])
      if (!(key in obj)) errors.push(`${path}: missing ${key}`);
    if (typeof schema.minProperties === "number" && Object.keys(obj).length < schema.minProperties)
      errors.push(`${path}: too few properties`);
    const props = (schema.properties as Record<string, Schema> | undefined) ?? {};
    for (const [key, v] of Object.entries(obj)) {
      if (props[key] !== undefined) check(root, props[key], v, `${path}.${key}`, errors);
      else if (schema.additionalProperties === false) errors.push(`${path}: unexpected ${key}`);
    }
  }
}
