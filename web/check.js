// The check panel: a model, GPUs and vLLM flags (or a pasted command) → POST /v1/check → the
// verdict with vLLM's message, the memory bar of one GPU (× N), KV cache tokens and concurrency.
import { api, esc, errorCard, formState, saveState } from "/web/app.js";

const flagFields = ["max_model_len", "gpu_memory_utilization", "tensor_parallel_size", "max_num_seqs", "kv_cache_dtype"];
const numeric = new Set(["gpu_memory_utilization", "tensor_parallel_size", "max_num_seqs"]);

export function request(state) {
  const body = {};
  if (state.gpu) body.gpu = state.gpu;
  if (state.gpus) body.gpus = Number(state.gpus);
  if (state.vllm_version) body.vllm_version = state.vllm_version;
  if (state.command) {
    body.command = state.command;
    return body;
  }
  body.model = state.model || "";
  const flags = {};
  for (const f of flagFields) {
    if (state[f] === undefined) continue;
    flags[f] = numeric.has(f) || /^\d+$/.test(state[f]) ? Number(state[f]) : state[f];
  }
  if (state.enforce_eager) flags.enforce_eager = true;
  if (Object.keys(flags).length) body.flags = flags;
  return body;
}

const parts = [
  ["weights", "weights_gib", "weights"],
  ["activation", "activation_peak_gib", "activation peak"],
  ["non_torch", "non_torch_gib", "non-torch"],
  ["cuda_graph", "cuda_graph_gib", "CUDA graphs"],
  ["kv_cache", "kv_cache_gib", "KV cache"],
];

const swatch = { weights: "weights", activation: "activation", non_torch: "nontorch", cuda_graph: "graphs", kv_cache: "kv" };

function gib(x) { return x === null || x === undefined ? "–" : `${Number(x).toFixed(2)} GiB`; }
function num(x) { return x === null || x === undefined ? "–" : Number(x).toLocaleString("en-US"); }

export function memoryBars(doc) {
  const m = doc.memory;
  const total = m.total_gib;
  let used = 0;
  const spans = parts.map(([cls, key, label]) => {
    const v = Math.max(0, m[key] || 0);
    used += v;
    return `<span class="${cls}" style="width:${(100 * v / total).toFixed(2)}%" title="${label}: ${gib(m[key])}"></span>`;
  }).join("");
  // Every GPU holds the same split (vLLM shards evenly): one bar stands for all of them.
  const gpus = doc.gpu.used || 1;
  const count = gpus > 1 ? ` × ${num(gpus)} GPUs` : "";
  const over = used > total ? ` (over by ${gib(used - total)})` : "";
  let html = `<div class="gpu-bar"><small class="gpu-count">${esc(doc.gpu.name)}${count}, ${gib(total)}${gpus > 1 ? " each" : ""}${over}</small>
      <div class="bar" role="img" aria-label="${gpus > 1 ? `each of ${num(gpus)} GPUs` : "GPU"}: ${parts.map(([, k, l]) => `${l} ${gib(m[k])}`).join(", ")} of ${gib(total)}">${spans}</div></div>`;
  html += `<ul class="legend">${parts.map(([cls, key, label]) => `<li><i style="background:var(--${swatch[cls]})"></i>${label} ${gib(m[key])}</li>`).join("")}</ul>`;
  return html;
}

// `id` names the verdict's elements so a test (or a user's bookmarklet) can find them.
export function verdict(doc, id = "verdict") {
  const ok = doc.outcome === "ok";
  const f = doc.failure;
  return `<p class="verdict ${ok ? "ok" : "fails"}" id="${id}" data-outcome="${esc(doc.outcome)}">${ok ? "Starts" : "Fails: " + esc(f ? f.class : "")}</p>
    ${f ? `<p class="message" id="${id}-message">${esc(f.message)}</p><p><small>phase: ${esc(f.phase)}</small></p>` : ""}`;
}

// Single flag changes that the same prediction says start (a failing check only). A JSON value
// (--limit-mm-per-prompt, --mm-processor-kwargs) is single-quoted, as a shell takes it back.
function shellWord(value) {
  return /^[A-Za-z0-9._\-\/:,+=]+$/.test(value) ? value : `'${value.replaceAll("'", "'\\''")}'`;
}

function changeText(c) {
  const set = Object.entries(c.set).map(([flag, value]) => (value === "" ? flag : `${flag} ${shellWord(value)}`));
  const dropped = (c.remove || []).map((flag) => `drop ${flag}`);
  return [...set, ...dropped].join(" ");
}

export function changes(doc) {
  const list = doc.changes || [];
  if (!list.length) return "";
  const used = doc.settings.tensor_parallel_size * doc.settings.pipeline_parallel_size;
  return `<p><strong>To start, change one of</strong></p><ul class="plain" id="changes">${list
    .map((c) => `<li><code>${esc(changeText(c))}</code>${c.gpus !== used ? ` (${c.gpus} GPUs)` : ""}: ${num(c.kv_cache_tokens)} KV tokens, ${Number(c.max_concurrency).toFixed(2)}× · <small>${esc(c.why)}</small></li>`)
    .join("")}</ul>`;
}

// The range every prediction states (kv_cache_range): the calibrated error inside what the
// calibration covers, else the reasons it is wider.
function kvRange(doc) {
  const r = doc.kv_cache_range;
  if (!r || r.reserved || !(doc.kv_cache_tokens > 0)) return "";
  const why = r.calibrated ? "inside what the calibration covers" : (r.reasons || []).join("; ");
  return `<div><dt>KV range</dt><dd id="kv-range" title="${esc(why)}">${num(r.kv_tokens_low)}–${num(r.kv_tokens_high)}</dd></div>`;
}

export function render(doc) {
  const s = doc.settings;
  return `<div class="card">${verdict(doc)}
    ${changes(doc)}
    <p><small>${esc(doc.model.id)}${doc.model.architecture_assumed_from ? ` (architecture assumed from ${esc(doc.model.architecture_assumed_from)}: its own config was not read)` : ""} · vLLM ${esc(doc.vllm_version)} · tp=${s.tensor_parallel_size} pp=${s.pipeline_parallel_size} · max_model_len ${num(s.max_model_len)} · utilization ${s.gpu_memory_utilization}</small></p>
    ${memoryBars(doc)}
    <dl class="figures">
      <div><dt>KV cache tokens</dt><dd id="kv-tokens">${num(doc.kv_cache_tokens)}</dd></div>
      ${kvRange(doc)}
      <div><dt>Max concurrency at ${num(s.max_model_len)} tokens</dt><dd id="concurrency">${Number(doc.max_concurrency).toFixed(2)}×</dd></div>
      <div><dt>GPU blocks</dt><dd>${num(doc.num_gpu_blocks)}</dd></div>
      <div><dt>Longest request that fits</dt><dd>${num(doc.largest_fitting_max_model_len)}</dd></div>
      <div><dt>Budget</dt><dd>${gib(doc.memory.budget_gib)}</dd></div>
      <div><dt>KV cache memory</dt><dd>${gib(doc.memory.kv_cache_gib)}</dd></div>
    </dl>
    ${(doc.warnings || []).length ? `<p><strong>Warnings</strong></p><ul class="plain">${doc.warnings.map((w) => `<li>${esc(w)}</li>`).join("")}</ul>` : ""}
    ${(doc.notes || []).length ? `<details><summary>Notes</summary><ul class="plain">${doc.notes.map((w) => `<li>${esc(w)}</li>`).join("")}</ul></details>` : ""}
  </div>`;
}

export function init(form) {
  const out = document.getElementById("check-result");
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const state = formState(form);
    saveState("check", state);
    out.innerHTML = "<p>Checking…</p>";
    const r = await api("/v1/check", JSON.stringify(request(state)));
    out.innerHTML = r.ok ? render(r.doc) : errorCard(r.doc, r.status);
  });
}
