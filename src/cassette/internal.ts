/**
 * Names invocache's own modules need from the cassette and users must not
 * see: no package subpath points at this file.
 */
export { recordingCassetteStore } from "./store.js";
