// The diagnose panel: a pasted vLLM log → POST /v1/diagnose → the failure, its phase and vLLM's
// line, and the fixes with their commands.
import { api, esc, errorCard, formState, saveState } from "/web/app.js";

export function render(doc) {
  const p = doc.primary;
  if (!p) return `<div class="card"><p class="verdict ok" id="diagnosis" data-class="">No failure found</p><p>${esc(doc.lines)} lines read.</p></div>`;
  const fixes = (doc.fixes || []).map((f, i) => `<li><strong>${esc(Object.entries(f.changes || {}).map(([k, v]) => (v === true ? k : k + " " + v)).join(" ") || f.action || "(no flag change)")}</strong>
      <small>(confidence ${Number(f.confidence).toFixed(2)})</small><br>${esc(f.why)}
      ${f.command ? `<pre class="command" id="fix-command-${i}">${esc(f.command)}</pre>` : ""}</li>`).join("");
  return `<div class="card"><p class="verdict fails" id="diagnosis" data-class="${esc(p.class)}">${esc(p.class ?? "No class: the engine died and the log does not show why")}</p>
      <p><small>phase ${esc(p.phase)}, line ${esc(p.line)}</small></p>
      <p class="message">${esc(p.message)}</p>
      ${fixes ? `<h2>Fixes</h2><ol class="plain">${fixes}</ol>` : ""}
      ${(doc.dead_ends || []).length ? `<h2>Dead ends</h2><ul class="plain">${doc.dead_ends.map((d) => `<li>${esc(d.action)}: ${esc(d.why_fails)}</li>`).join("")}</ul>` : ""}
    </div>`;
}

export function init(form) {
  const out = document.getElementById("diagnose-result");
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const state = formState(form);
    const log = state.log || "";
    delete state.log;  // a log is too large for a link; only the options go in the URL
    saveState("diagnose", state);
    out.innerHTML = "<p>Reading the log…</p>";
    const path = "/v1/diagnose" + (state.gpus ? "?gpus=" + encodeURIComponent(state.gpus) : "");
    const r = await api(path, log, "text/plain");
    out.innerHTML = r.ok ? render(r.doc) : errorCard(r.doc, r.status);
  });
}
