/**
 * The little script every page carries (inlined; no request). It only adds
 * comfort: `/` focuses the search box, `j`/`k` move through table rows and
 * Enter opens one, a filter box narrows a table as you type, and in an
 * exported report it shows the section named by the URL's `#` (the report
 * is one file, so its "pages" are sections). Everything works without it
 * except the report's navigation.
 */
export const CLIENT_SCRIPT = `
(() => {
  const sections = document.querySelectorAll("section[data-route]");
  if (sections.length > 0) {
    const show = () => {
      const want = location.hash.replace(/^#/, "") || "/";
      let found = false;
      for (const s of sections) {
        const on = s.getAttribute("data-route") === want;
        s.hidden = !on;
        if (on) found = true;
      }
      if (!found) for (const s of sections) s.hidden = s.getAttribute("data-route") !== "/";
      window.scrollTo(0, 0);
    };
    window.addEventListener("hashchange", show);
    show();
  }
  const visibleRows = () =>
    [...document.querySelectorAll("section:not([hidden]) tbody tr[data-href], main:not(:has(section)) tbody tr[data-href]")]
      .filter((r) => !r.hidden && r.offsetParent !== null);
  let sel = -1;
  const mark = (rows) => {
    rows.forEach((r, i) => r.classList.toggle("sel", i === sel));
    rows[sel]?.scrollIntoView({ block: "nearest" });
  };
  document.addEventListener("click", (e) => {
    const row = e.target.closest && e.target.closest("tr[data-href]");
    if (row && !e.target.closest("a")) location.href = row.getAttribute("data-href");
  });
  document.addEventListener("keydown", (e) => {
    const t = e.target;
    if (t && (t.tagName === "INPUT" || t.tagName === "SELECT" || t.tagName === "TEXTAREA")) {
      if (e.key === "Escape") t.blur();
      return;
    }
    if (e.metaKey || e.ctrlKey || e.altKey) return;
    const rows = visibleRows();
    if (e.key === "/") {
      const box = document.querySelector("section:not([hidden]) input[type=search], main input[type=search]");
      if (box) { e.preventDefault(); box.focus(); }
    } else if (e.key === "j" || e.key === "k") {
      if (rows.length === 0) return;
      sel = Math.max(0, Math.min(rows.length - 1, sel + (e.key === "j" ? 1 : -1)));
      mark(rows);
    } else if (e.key === "Enter" && rows[sel]) {
      location.href = rows[sel].getAttribute("data-href");
    }
  });
  for (const box of document.querySelectorAll("input[data-filter]")) {
    const table = document.getElementById(box.getAttribute("data-filter"));
    if (!table) continue;
    box.addEventListener("input", () => {
      const q = box.value.trim().toLowerCase();
      for (const row of table.querySelectorAll("tbody tr")) {
        row.hidden = q !== "" && !row.textContent.toLowerCase().includes(q);
      }
      sel = -1;
    });
  }
})();
`;
