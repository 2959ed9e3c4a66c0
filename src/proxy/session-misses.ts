/**
 * The replay misses each session's calls were answered with. A test whose
 * code catches the SDK's error on a miss would otherwise pass while its
 * recording is out of date; a harness (pytest-invocache) asks for them when
 * the test ends (`GET /_invocache/sessions/<sid>/misses`) and fails the test
 * with the miss report. Bounded per session: the first few reports and a count.
 */

/** Reports kept per session; later misses are only counted. */
const KEPT = 10;

export interface SessionMissReport {
  /** Misses answered in this session. */
  count: number;
  /** The first reports (the miss message: nearest entry, what differs), in order. */
  misses: string[];
}

export class SessionMisses {
  readonly #bySession = new Map<string, SessionMissReport>();

  /** Note `response` for `sid` when it answers a replay miss (`x-invocache-miss: 1`). */
  async note(sid: string, response: Response): Promise<void> {
    if (response.headers.get("x-invocache-miss") !== "1") return;
    const report = this.#bySession.get(sid) ?? { count: 0, misses: [] };
    this.#bySession.set(sid, report);
    report.count++;
    if (report.misses.length < KEPT) report.misses.push(await messageOf(response.clone()));
  }

  /** The misses noted for `sid` (none when nothing missed). */
  of(sid: string): SessionMissReport {
    const report = this.#bySession.get(sid);
    return report === undefined
      ? { count: 0, misses: [] }
      : { ...report, misses: [...report.misses] };
  }

  /** Forget `sid` (its session was deleted). */
  drop(sid: string): void {
    this.#bySession.delete(sid);
  }
}

/** The miss answer's message, in any provider's error shape; else its text. */
async function messageOf(response: Response): Promise<string> {
  const text = await response.text();
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown }; message?: unknown };
    if (typeof body.error?.message === "string") return body.error.message;
    if (typeof body.message === "string") return body.message;
  } catch {
    // not JSON: the text itself
  }
  return text;
}
