/**
 * The one check every adapter and integration makes of its options: a real recorder, so a
 * wrong argument fails at set-up with the fix, not on the first model call.
 */
import type { Recorder } from "../recorder/index.js";

/**
 * `options.recorder`, checked; `who` names the adapter in the message.
 *
 * @example
 * const recorder = requireRecorder(options, "createFetch", "{ recorder, fetch? }");
 */
export function requireRecorder(options: unknown, who: string, shape: string): Recorder {
  if (options === null || typeof options !== "object") {
    throw new TypeError(`${who}: options must be an object like ${shape}`);
  }
  const { recorder } = options as { recorder?: Partial<Recorder> | null };
  if (
    recorder === null ||
    typeof recorder !== "object" ||
    typeof recorder.call !== "function" ||
    typeof recorder.run !== "function" ||
    typeof recorder.stream !== "function"
  ) {
    throw new TypeError(`${who}: options.recorder must be a recorder (createRecorder())`);
  }
  return recorder as Recorder;
}
