import { join } from "node:path";
import { cassetteStore } from "../../src/cassette/index.js";
import { storeConformance } from "../../src/testing/store-conformance.js";
import { tempDir } from "../helpers/tmp.js";

const dir = tempDir("cassette-conf");

// A file per handle: writes are fsynced, and the suite's ttl tests allow a
// few hundred milliseconds per write. (Handles sharing one file, and
// processes sharing one, are tested in store.test.ts and concurrency.test.ts.)
let n = 0;
storeConformance("cassette", () =>
  cassetteStore(join(dir, `eager-${n++}.yaml`), { parseCache: join(dir, "cache") }),
);

// Buffered writes (the vitest helper's mode) must behave the same.
storeConformance("cassette (write: on-close)", () =>
  cassetteStore(join(dir, `buffered-${n++}.yaml`), { write: "on-close", parseCache: false }),
);
