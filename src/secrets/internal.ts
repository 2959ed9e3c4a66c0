/**
 * The secrets module's face for the other modules of invocache, not for
 * users: no package subpath points here, so nothing in it is public API (the
 * API reports cover the index files). Other modules import secrets through
 * its index.ts or this file, never deeper (.dependency-cruiser.cjs).
 */
export { nextLongRun } from "./long-runs.js";
