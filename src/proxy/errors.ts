import { InvocacheError } from "../errors.js";

/**
 * A proxy that cannot start, or a request it refuses: `field` names the
 * option, header or control field that is wrong, `status` the HTTP status a
 * refused request gets, and the message ends with the fix.
 *
 * @example
 * await createProxy({ store: "memory://", host: "0.0.0.0" }) // ProxyError: host 0.0.0.0 needs a token
 */
export class ProxyError extends InvocacheError {
  /** The option, header or field at fault, e.g. `host`, `x-invocache-attempt`. */
  readonly field: string;
  /** The HTTP status a request refused with this error gets. */
  readonly status: number;

  constructor(
    code: string,
    field: string,
    message: string,
    options: { status?: number; cause?: unknown } = {},
  ) {
    super(code, message, options.cause === undefined ? undefined : { cause: options.cause });
    this.field = field;
    this.status = options.status ?? 400;
  }
}
