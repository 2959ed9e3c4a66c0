/** This package's version, written into every entry and stamp (a test keeps it equal to package.json). */
export const INVOCACHE_VERSION = "0.1.0";
