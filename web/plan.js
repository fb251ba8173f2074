// The plan panel: a model, GPUs and a workload → POST /v1/plan → the recommended configuration,
// its command with a copy button, the alternatives, or why nothing fits.
import { api, esc, errorCard, formState, saveState } from "/web/app.js";
import { memoryBars, verdict } from "/web/check.js";

export function request(state) {
  const body = { model: state.model || "" };
  if (state.gpu) body.gpu = state.gpu;
  if (state.gpus) body.gpus = Number(state.gpus);
  if (state.vllm_version) body.vllm_version = state.vllm_version;
  if (state.context) body.context = Number(state.context);
  if (state.concurrency) body.concurrency = Number(state.concurrency);
  if (state.goal) body.goal = state.goal;
  if (state.allow_fp8_kv) body.allow_fp8_kv = true;
  if (state.allow_eager) body.allow_eager = true;
  return body;
}

function configBody(c, id) {
  return `<pre class="command" id="${id}">${esc(c.renderings.vllm_serve)}</pre>
    <button type="button" class="copy" data-copy="${id}">Copy command</button>
    <ul class="plain">${(c.choices || []).map((ch) => `<li><code>${esc(ch.setting)}=${esc(ch.value)}</code>: ${esc(ch.reason)}</li>`).join("")}</ul>
    ${c.prediction ? memoryBars(c.prediction) : ""}`;
}

function heading(c) {
  return `<strong>${esc(c.label)}</strong>${c.trade_off ? ` — ${esc(c.trade_off)}` : ""}`;
}

function config(c, id) {
  return `<div class="card config"><p>${heading(c)}</p>${configBody(c, id)}</div>`;
}

// An alternative opens on demand: its label and trade-off say enough to choose, and a page of
// full alternatives was several screens long on a phone.
function alternative(c, id) {
  return `<details class="card config"><summary>${heading(c)}</summary>${configBody(c, id)}</details>`;
}

export function render(doc) {
  if (!doc.recommended) {
    const nf = doc.no_fit || {};
    return `<div class="card"><p class="verdict fails" id="plan-outcome" data-outcome="${esc(doc.outcome)}">Nothing fits</p>
      <p>${esc(nf.reason)}</p>
      <ul class="plain">${(nf.changes || []).map((c) => `<li>${esc(c.summary)}</li>`).join("")}</ul></div>`;
  }
  const rec = doc.recommended;
  return `<div class="card"><p class="verdict ok" id="plan-outcome" data-outcome="${esc(doc.outcome)}">Plan for ${esc(doc.context_tokens)} tokens</p>
      ${rec.prediction ? verdict(rec.prediction, "plan-verdict") : ""}
      <ul class="plain">${(doc.explanation || []).map((e) => `<li>${esc(e)}</li>`).join("")}</ul></div>
    ${config(rec, "plan-command")}
    ${(doc.alternatives || []).length ? `<h2>Alternatives</h2>` + doc.alternatives.map((a, i) => alternative(a, "alt-command-" + i)).join("") : ""}`;
}

export function init(form) {
  const out = document.getElementById("plan-result");
  out.addEventListener("click", async (ev) => {
    const button = ev.target.closest("button.copy");
    if (!button) return;
    const text = document.getElementById(button.dataset.copy).textContent;
    try {
      await navigator.clipboard.writeText(text);
      button.textContent = "Copied";
    } catch {
      // Without clipboard access (plain http off localhost): select the text for Ctrl+C.
      const range = document.createRange();
      range.selectNodeContents(document.getElementById(button.dataset.copy));
      getSelection().removeAllRanges();
      getSelection().addRange(range);
      button.textContent = "Selected: press Ctrl+C";
    }
  });
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const state = formState(form);
    saveState("plan", state);
    out.innerHTML = "<p>Planning…</p>";
    const r = await api("/v1/plan", JSON.stringify(request(state)));
    out.innerHTML = r.ok ? render(r.doc) : errorCard(r.doc, r.status);
  });
}
