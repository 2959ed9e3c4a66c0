/**
 * HTML escaping for the viewer. Every view builds its markup with the `html`
 * tagged template: interpolated values are escaped unless they are already
 * {@link SafeHtml} (markup another `html` call produced). So a prompt that
 * contains `<script>` is shown as text, never run: escaping is the default,
 * not something a view has to remember.
 */

const ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
  "`": "&#96;",
};

/** Markup that is safe to insert as is. Only `html` and `raw` make one. */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

/**
 * Escape text for an HTML text node or a quoted attribute value.
 *
 * @example
 * escapeHtml('<script>alert("x")</script>') // "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;"
 */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (c) => ESCAPES[c]!);
}

/** A value a view may interpolate: text (escaped), markup, or a list of either. */
export type HtmlValue = SafeHtml | string | number | boolean | null | undefined | HtmlValue[];

function render(value: HtmlValue): string {
  if (value === null || value === undefined || value === false) return "";
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(render).join("");
  return escapeHtml(String(value));
}

/**
 * The tagged template every view uses: escapes each interpolated value.
 *
 * @example
 * html`<p>${userText}</p>` // userText shown as text
 */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  let out = strings[0] ?? "";
  for (let i = 0; i < values.length; i++) out += render(values[i]) + (strings[i + 1] ?? "");
  return new SafeHtml(out);
}

/**
 * Trusted markup written by the viewer itself (its stylesheet and script),
 * never data from a store.
 */
export function raw(markup: string): SafeHtml {
  return new SafeHtml(markup);
}
