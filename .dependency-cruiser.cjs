// The layering of docs/architecture.md as rules that fail `npm test`.
// Each rule names the arrow it forbids and why; docs/architecture.md lists the
// same rules in prose. Run: npx depcruise src --config .dependency-cruiser.cjs
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "no-cycles",
      severity: "error",
      comment:
        "No import cycles, type-only imports included: a cycle means two modules are one concept split badly.",
      from: { path: "^src/" },
      to: { circular: true },
    },
    {
      name: "leaves-import-nothing-of-ours",
      severity: "error",
      comment:
        "src/secrets, src/json, src/files, src/shell, src/errors.ts and src/version.ts are leaves: everything may use them, they use nothing of ours (errors may use json/secrets types only).",
      from: { path: "^src/(secrets|json|files|shell)/|^src/version\\.ts$" },
      to: {
        path: "^src/",
        pathNot: "^src/(secrets|json|files|shell)/|^src/version\\.ts$|^src/errors\\.ts$",
      },
    },
    {
      name: "errors-is-a-leaf",
      severity: "error",
      comment: "src/errors.ts holds the typed errors every layer throws: it imports no layer.",
      from: { path: "^src/errors\\.ts$" },
      to: { path: "^src/", pathNot: "^src/(json|secrets)/|^src/version\\.ts$" },
    },
    {
      name: "normalize-is-pure-core",
      severity: "error",
      comment:
        "src/normalize is the pure core: it may use the leaves only (secrets through its narrow interface).",
      from: { path: "^src/normalize/" },
      to: { path: "^src/", pathNot: "^src/(normalize|secrets|json)/|^src/errors\\.ts$" },
    },
    {
      name: "identity-is-pure-core",
      severity: "error",
      comment:
        "src/identity builds manifests and digests: it may use normalize and the leaves, nothing above.",
      from: { path: "^src/identity/" },
      to: {
        path: "^src/",
        pathNot: "^src/(identity|normalize|secrets|json)/|^src/(errors|version)\\.ts$",
      },
    },
    {
      name: "core-does-no-io",
      severity: "error",
      comment:
        "The pure core touches the machine in two documented places only: root resolution (normalize/roots.ts) and artifact hashing (identity/artifact.ts).",
      from: {
        path: "^src/(normalize|identity)/",
        pathNot: "^src/normalize/roots\\.ts$|^src/identity/artifact\\.ts$",
      },
      to: {
        dependencyTypes: ["core"],
        path: "^(node:)?(fs|fs/promises|os|path|net|http|https|child_process|worker_threads|dgram|tls|process)$",
      },
    },
    {
      name: "core-uses-no-packages-but-hashes",
      severity: "error",
      comment:
        "normalize and identity depend on no npm package except @noble/hashes and diff (word diffs in explain).",
      from: { path: "^src/(normalize|identity)/" },
      to: {
        dependencyTypes: ["npm", "npm-dev", "npm-optional", "npm-peer"],
        pathNot: "@noble/hashes|/diff/",
      },
    },
    {
      name: "store-below-recorder",
      severity: "error",
      comment:
        "Stores keep values: they know nothing of replay policy, adapters, the CLI or provenance, nor of accounting (the stored form of usage is the envelope's, src/store/usage-format.ts).",
      from: { path: "^src/(store|cassette)/" },
      to: {
        path: "^src/(recorder|adapters|cli|provenance|testing|integrations|viewer|source|proxy|usage|observability)/",
      },
    },
    {
      name: "usage-only-reads-and-sums",
      severity: "error",
      comment:
        "src/usage reads token usage out of responses, prices it and sums it: it may use the leaves and the stored usage format (the store's index), nothing that calls, replays or shows.",
      from: { path: "^src/usage/" },
      to: {
        path: "^src/",
        pathNot:
          "^src/usage/|^src/store/index\\.ts$|^src/(json|secrets)/|^src/(errors|version)\\.ts$",
      },
    },
    {
      name: "observability-only-exports",
      severity: "error",
      comment:
        "src/observability turns the recorder's call summaries into spans and counters: it may use the leaves and src/usage (the summary's shape), never the recorder, the stores or anything above them.",
      from: { path: "^src/observability/" },
      to: {
        path: "^src/",
        pathNot: "^src/observability/|^src/usage/|^src/(json|secrets)/|^src/(errors|version)\\.ts$",
      },
    },
    {
      name: "recorder-below-adapters",
      severity: "error",
      comment: "The recorder is called by adapters, never the reverse.",
      from: { path: "^src/recorder/" },
      to: { path: "^src/(adapters|cli|testing|integrations|viewer|source|proxy)/" },
    },
    {
      name: "source-only-locates-and-opens",
      severity: "error",
      comment:
        "src/source says where a store URL, cassette file or folder is and opens it: it uses the stores through their faces (index files; the cassette's internal.ts for the recording handle the proxy opens) and nothing above them.",
      from: { path: "^src/source/" },
      to: {
        path: "^src/",
        pathNot:
          "^src/source/|^src/(store|cassette)/(index|internal)\\.ts$|^src/(json|secrets|files)/|^src/(errors|version)\\.ts$",
      },
    },
    {
      name: "proxy-is-a-client-of-the-library",
      severity: "error",
      comment:
        "src/proxy serves HTTP in front of createFetch: it reaches the library through the modules' index files only, and nothing below it imports it.",
      from: { path: "^src/proxy/" },
      to: {
        path: "^src/(normalize|identity|secrets|json|files|shell|store|cassette|recorder|adapters|source|usage)/(?!index\\.ts$)|^src/(cli|viewer|testing|integrations|tools|provenance)/",
      },
    },
    {
      name: "only-the-cli-imports-the-proxy",
      severity: "error",
      comment:
        "The proxy is an application of the library: only the CLI (and the root's subpath) may start one.",
      from: { path: "^src/", pathNot: "^src/(cli|proxy)/" },
      to: { path: "^src/proxy/" },
    },
    {
      name: "adapters-only-translate",
      severity: "error",
      comment:
        "Adapters (and the translation base, src/invocation) translate a framework call into an InvocationRequest: they never normalize or hash, and reach identity and the recorder only through their public index.",
      from: { path: "^src/(adapters|integrations|tools|invocation)/" },
      to: {
        path: "^src/(normalize|store|cassette)/|^src/(identity|recorder)/(?!index\\.ts$)",
      },
    },
    {
      name: "readers-use-the-public-api",
      severity: "error",
      comment:
        "The CLI and the viewer read stores through the public API: the root and the modules' index files (the package's subpaths), never a module's internals; identity's internal.ts (the kind table) is the one face for invocache's own modules beside them.",
      from: { path: "^src/(cli|viewer)/" },
      to: {
        path: "^(?!src/identity/internal\\.ts$)src/(normalize|identity|secrets|json|files|shell|store|cassette|recorder|adapters|tools|provenance|testing|integrations|observability|usage|source|proxy|import)/(?!index\\.ts$)",
      },
    },
    {
      name: "import-is-a-client-of-the-library",
      severity: "error",
      comment:
        "src/import translates other tools' recordings and sends them through createFetch and the recorder: it reaches other modules through their index files only, and only the CLI imports it.",
      from: { path: "^src/import/" },
      to: {
        path: "^src/(normalize|identity|secrets|json|files|shell|store|cassette|recorder|adapters|source|usage)/(?!index\\.ts$)|^src/(cli|viewer|testing|integrations|tools|provenance|proxy)/",
      },
    },
    {
      name: "only-the-cli-imports-import",
      severity: "error",
      comment:
        "Import is a CLI feature built on the library: nothing in the library depends on it.",
      from: { path: "^src/", pathNot: "^src/(cli|import)/" },
      to: { path: "^src/import/" },
    },
    {
      name: "modules-meet-at-their-index",
      severity: "error",
      comment:
        "Every module is imported through its face: its index.ts (the public one, which the package's subpaths point at) or its internal.ts (names invocache's own modules need and users must not see: no subpath points at it). Never a file behind them.",
      from: { path: "^src/([^/]+)/" },
      // An integration file is its own face: each is a package subpath of its own (invocache/global, …).
      to: {
        path: "^src/[^/]+/",
        pathNot: ["^src/$1/", "^src/[^/]+/(index|internal)\\.ts$", "^src/integrations/[^/]+\\.ts$"],
      },
    },
    {
      name: "root-meets-modules-at-their-index",
      severity: "error",
      comment:
        "The root's public names are re-exported from the modules' faces (index.ts, internal.ts), never from a file behind them.",
      from: { path: "^src/[^/]+\\.ts$" },
      to: { path: "^src/[^/]+/", pathNot: ["^src/[^/]+/(index|internal)\\.ts$"] },
    },
    {
      name: "tools-do-not-import-adapters",
      severity: "error",
      comment:
        "Tool wrappers and SDK adapters are siblings: both translate a foreign call through the one contract in src/invocation (invocationCall, toolInvocationCall), neither imports the other.",
      from: { path: "^src/tools/" },
      to: { path: "^src/adapters/" },
    },
    {
      name: "library-does-not-import-cli",
      severity: "error",
      comment: "The CLI is a client of the library, not a part other modules reach into.",
      from: { path: "^src/", pathNot: "^src/cli/" },
      to: { path: "^src/cli/" },
    },
    {
      name: "root-does-not-load-optional-peers",
      severity: "error",
      comment:
        "Optional integrations are optional peers behind their own subpath; the root's modules never import them at module load.",
      from: {
        path: "^src/(index\\.ts|normalize|identity|store|cassette|recorder|secrets|json|provenance)",
      },
      to: {
        dependencyTypes: ["npm-peer", "npm-optional"],
        dynamic: false,
      },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      extensions: [".ts", ".js", ".d.ts"],
    },
    moduleSystems: ["es6"],
  },
};
