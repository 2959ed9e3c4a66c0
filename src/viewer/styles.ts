/**
 * The viewer's stylesheet, inlined into every page (no asset requests, so
 * the exported report is one file). Colours are the Okabe-Ito palette,
 * readable with the common colour-vision deficiencies; every state also has
 * an icon and a word, never colour alone. Light and dark follow the
 * system's `prefers-color-scheme`.
 */
export const STYLES = `
:root {
  color-scheme: light dark;
  --bg: #fbfbfa; --panel: #ffffff; --sunk: #f3f3f1; --text: #1d1f23; --muted: #5d6470;
  --line: #e3e3df; --accent: #0b62a4; --accent-soft: #e5f0fa;
  --ok: #0072b2; --ok-soft: #e1effa; --bad: #b84a00; --bad-soft: #fcebdd;
  --warn: #8a6d00; --warn-soft: #fbf3d5; --tok: #6a3d9a; --tok-soft: #efe7f7;
  --del: #fbe3d6; --del-text: #8f3a00; --ins: #dcecf8; --ins-text: #00507e;
  --mono: ui-monospace, "SF Mono", "Cascadia Code", "JetBrains Mono", Menlo, Consolas, "DejaVu Sans Mono", monospace;
  --sans: system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "DejaVu Sans", sans-serif;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #15171b; --panel: #1c1f24; --sunk: #23272e; --text: #e6e7ea; --muted: #9aa3af;
    --line: #30353d; --accent: #6cb6f0; --accent-soft: #1d3347;
    --ok: #56b4e9; --ok-soft: #16324a; --bad: #f0a35a; --bad-soft: #47301a;
    --warn: #e8c547; --warn-soft: #3c3417; --tok: #c9a6f0; --tok-soft: #35294a;
    --del: #4a2a17; --del-text: #ffc59a; --ins: #15354d; --ins-text: #a9dcff;
  }
}
* { box-sizing: border-box; }
html { font-size: 15px; }
body { margin: 0; background: var(--bg); color: var(--text); font: 1rem/1.55 var(--sans); }
a { color: var(--accent); text-decoration: none; }
a:hover { text-decoration: underline; }
code, pre, .mono { font-family: var(--mono); font-size: 0.9em; }
header.top { display: flex; align-items: center; gap: 1.5rem; padding: 0.8rem 2rem;
  background: var(--panel); border-bottom: 1px solid var(--line); position: sticky; top: 0; z-index: 5; }
header.top .brand { font-weight: 700; letter-spacing: -0.01em; color: var(--text); font-size: 1.05rem; }
header.top .brand span { color: var(--muted); font-weight: 400; }
header.top nav { display: flex; gap: 0.25rem; }
header.top nav a { padding: 0.3rem 0.7rem; border-radius: 6px; color: var(--muted); }
header.top nav a.on, header.top nav a:hover { background: var(--sunk); color: var(--text); text-decoration: none; }
header.top .src { margin-left: auto; color: var(--muted); font-size: 0.85rem; max-width: 40%;
  overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
main { max-width: 1180px; margin: 0 auto; padding: 1.8rem 2rem 4rem; }
h1 { font-size: 1.55rem; margin: 0 0 0.3rem; letter-spacing: -0.015em; }
h2 { font-size: 1.1rem; margin: 2.2rem 0 0.8rem; }
h3 { font-size: 0.95rem; margin: 1.2rem 0 0.5rem; color: var(--muted); text-transform: uppercase; letter-spacing: 0.05em; }
.sub { color: var(--muted); margin: 0 0 1.2rem; }
.crumbs { color: var(--muted); font-size: 0.88rem; margin-bottom: 0.6rem; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(180px, 1fr)); gap: 0.9rem; margin: 1.2rem 0; }
.card { background: var(--panel); border: 1px solid var(--line); border-radius: 10px; padding: 0.9rem 1.1rem; }
.card .n { font-size: 1.6rem; font-weight: 650; letter-spacing: -0.02em; }
.card .l { color: var(--muted); font-size: 0.85rem; }
.panel { background: var(--panel); border: 1px solid var(--line); border-radius: 10px; padding: 1.1rem 1.3rem; margin: 0.9rem 0; }
table { width: 100%; border-collapse: collapse; background: var(--panel); border: 1px solid var(--line); border-radius: 10px; overflow: hidden; }
th, td { text-align: left; padding: 0.55rem 0.8rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-size: 0.78rem; text-transform: uppercase; letter-spacing: 0.05em; color: var(--muted); background: var(--sunk); font-weight: 600; }
tr:last-child td { border-bottom: 0; }
tbody tr:hover, tbody tr.sel { background: var(--accent-soft); }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td.reason { color: var(--muted); max-width: 420px; }
.kv { display: grid; grid-template-columns: max-content 1fr; gap: 0.35rem 1.4rem; margin: 0; }
.kv dt { color: var(--muted); }
.kv dd { margin: 0; overflow-wrap: anywhere; }
.badge { display: inline-flex; align-items: center; gap: 0.3em; padding: 0.05rem 0.55rem; border-radius: 999px;
  font-size: 0.82rem; font-weight: 600; border: 1px solid transparent; white-space: nowrap; }
.badge.accepted { background: var(--ok-soft); color: var(--ok); border-color: var(--ok); }
.badge.rejected { background: var(--bad-soft); color: var(--bad); border-color: var(--bad); }
.badge.miss { background: var(--warn-soft); color: var(--warn); border-color: var(--warn); }
.badge.plain { background: var(--sunk); color: var(--muted); border-color: var(--line); }
.badge.hit { background: var(--ok-soft); color: var(--ok); border-color: transparent; }
.badge.tool { background: var(--tok-soft); color: var(--tok); border-color: transparent; }
.id { font-family: var(--mono); font-size: 0.88em; }
form.search { display: flex; gap: 0.5rem; flex-wrap: wrap; margin: 0.6rem 0 1rem; }
input, select, button { font: inherit; color: inherit; background: var(--panel); border: 1px solid var(--line);
  border-radius: 7px; padding: 0.4rem 0.7rem; }
input[type=search] { flex: 1 1 280px; }
button { cursor: pointer; background: var(--sunk); }
.pager { display: flex; gap: 1rem; align-items: center; justify-content: flex-end; margin: 0.8rem 0; color: var(--muted); font-size: 0.9rem; }
.empty { color: var(--muted); padding: 1.4rem; text-align: center; background: var(--panel); border: 1px dashed var(--line); border-radius: 10px; }
.timeline { list-style: none; margin: 1rem 0; padding: 0; position: relative; }
.timeline::before { content: ""; position: absolute; left: 1.05rem; top: 0.4rem; bottom: 0.4rem; width: 2px; background: var(--line); }
.step { position: relative; display: grid; grid-template-columns: 2.2rem 1fr; gap: 0.9rem; margin: 0 0 0.8rem; }
.step .dot { width: 2.2rem; height: 2.2rem; border-radius: 50%; background: var(--panel); border: 2px solid var(--line);
  display: grid; place-items: center; font-weight: 700; font-size: 0.85rem; z-index: 1; color: var(--muted); }
.step.accepted .dot { border-color: var(--ok); color: var(--ok); }
.step.rejected .dot { border-color: var(--bad); color: var(--bad); }
.step.missing .dot { border-style: dashed; }
.step .body { background: var(--panel); border: 1px solid var(--line); border-radius: 10px; padding: 0.7rem 1rem; }
.step.rejected .body { border-left: 4px solid var(--bad); }
.step.accepted .body { border-left: 4px solid var(--ok); }
.step .head { display: flex; flex-wrap: wrap; align-items: baseline; gap: 0.4rem 1rem; }
.step .role { font-weight: 650; font-size: 1.02rem; }
.step.tool .body { background: var(--sunk); }
.step.tool .role { font-family: var(--mono); font-size: 0.95rem; color: var(--tok); }
.guess { color: var(--warn); font-style: italic; }
.step .meta { color: var(--muted); font-size: 0.88rem; display: flex; gap: 1rem; flex-wrap: wrap; }
.step .why { margin-top: 0.4rem; color: var(--text); font-size: 0.93rem; }
.lineage { margin-top: 0.5rem; font-size: 0.88rem; color: var(--muted); }
.lineage a { font-weight: 600; }
.hash { font-family: var(--mono); background: var(--sunk); padding: 0.1rem 0.45rem; border-radius: 5px; }
pre { margin: 0; white-space: pre-wrap; overflow-wrap: anywhere; }
.code { background: var(--sunk); border: 1px solid var(--line); border-radius: 8px; padding: 0.8rem 1rem; line-height: 1.5; }
details.fold > summary { cursor: pointer; color: var(--accent); margin: 0.4rem 0; }
details.fold[open] > summary .more { display: none; }
.tok { background: var(--tok-soft); color: var(--tok); border: 1px solid var(--tok); border-radius: 4px; padding: 0 0.2em; font-weight: 600; }
.chat { display: flex; flex-direction: column; gap: 0.7rem; margin: 0.6rem 0; }
.turn { border: 1px solid var(--line); border-radius: 10px; background: var(--panel); max-width: 92%; }
.turn .who { font-size: 0.76rem; font-weight: 700; text-transform: uppercase; letter-spacing: 0.06em; padding: 0.45rem 0.9rem 0; color: var(--muted); }
.turn .what { padding: 0.3rem 0.9rem 0.7rem; }
.turn.system { background: var(--sunk); max-width: 100%; }
.turn.user { align-self: flex-end; border-color: var(--accent); }
.turn.user .who { color: var(--accent); }
.turn.assistant .who { color: var(--ok); }
.turn.tool .who { color: var(--tok); }
.diff-grid { display: grid; grid-template-columns: 1fr 1fr; gap: 0.9rem; }
.diff-grid > div { min-width: 0; }
.diff-grid h3 { margin-top: 0.3rem; }
del { background: var(--del); color: var(--del-text); text-decoration: line-through; text-decoration-thickness: 1px; border-radius: 3px; }
ins { background: var(--ins); color: var(--ins-text); text-decoration: underline; text-decoration-thickness: 1px; border-radius: 3px; }
.legend { color: var(--muted); font-size: 0.85rem; margin: 0.3rem 0 0.8rem; }
ul.fields { list-style: none; padding: 0; margin: 0.5rem 0; }
ul.fields li { padding: 0.55rem 0.9rem; border: 1px solid var(--line); border-radius: 8px; margin-bottom: 0.5rem; background: var(--panel); }
ul.fields .f { font-weight: 650; margin-right: 0.6rem; }
.cmds pre { margin-bottom: 0.35rem; }
.tree { list-style: none; padding-left: 1.2rem; margin: 0.2rem 0; }
.tree li { margin: 0.25rem 0; }
.same { color: var(--ok); font-weight: 600; }
.differs { color: var(--bad); font-weight: 600; }
tr.first-diff td { background: var(--bad-soft); }
footer { color: var(--muted); font-size: 0.82rem; text-align: center; padding: 2rem 0; }
kbd { font-family: var(--mono); font-size: 0.8em; border: 1px solid var(--line); border-bottom-width: 2px; border-radius: 4px; padding: 0 0.35em; background: var(--panel); }
[hidden] { display: none !important; }
.hunk { margin-top: 0.5rem; }
@media (max-width: 760px) { .diff-grid { grid-template-columns: 1fr; } main { padding: 1rem; } header.top { padding: 0.6rem 1rem; } }
`;
