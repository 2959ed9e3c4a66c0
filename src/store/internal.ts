/**
 * The store module's face for the other modules of invocache, not for
 * users: no package subpath points here, so nothing in it is public API (the
 * API reports cover the index files). Other modules import store through
 * its index.ts or this file, never deeper (.dependency-cruiser.cjs).
 */
export { assertDigest, valueDigest } from "./digest.js";
export { type EntryHit, validateEntryHit } from "./envelope.js";
export { assertStoreKey } from "./keys.js";
export { checkMetaQuery } from "./meta.js";
export { checkKey, checkLease, checkPrefix, checkSet, StoreShell } from "./shell.js";
export { checkOnStale, isStale, type OnStale, parseMaxAge, recordedAt } from "./staleness.js";
export { isVouched, vouch } from "./vouched.js";
