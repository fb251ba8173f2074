// The page's shell: tabs, the state in the URL, the API client (bearer token when the server asks
// for one) and the suggestions for models and GPUs. Each panel is its own module.
import * as check from "/web/check.js";
import * as plan from "/web/plan.js";
import * as diagnose from "/web/diagnose.js";

const panels = { check, plan, diagnose };
const tokenKey = "headroom-token";

export async function api(path, body, contentType = "application/json") {
  const headers = {};
  const token = sessionStorage.getItem(tokenKey);
  if (token) headers["Authorization"] = "Bearer " + token;
  const init = body === undefined ? { headers } : { method: "POST", headers: { ...headers, "Content-Type": contentType }, body };
  const res = await fetch(path, init);
  let doc;
  try { doc = await res.json(); } catch { doc = { error: { code: "bad_response", message: `HTTP ${res.status}`, where: "" } }; }
  if (res.status === 401) document.getElementById("auth").hidden = false;
  return { ok: res.ok, status: res.status, doc };
}

// Text safe for innerHTML.
export function esc(value) {
  return String(value ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
}

export function errorCard(doc, status) {
  const e = doc.error || { code: "error", message: JSON.stringify(doc), where: "" };
  return `<div class="card error" role="alert" data-error-code="${esc(e.code)}"><strong>${esc(status)} ${esc(e.code)}</strong>
    <p class="message">${e.where ? esc(e.where) + ": " : ""}${esc(e.message)}</p></div>`;
}

// Form fields ↔ URL: ?tab=check&model=...&gpu=...; empty fields are left out.
export function formState(form) {
  const state = {};
  for (const el of form.elements) {
    if (!el.name) continue;
    if (el.type === "checkbox") { if (el.checked) state[el.name] = "1"; }
    else if (el.value.trim() !== "") state[el.name] = el.value.trim();
  }
  return state;
}

function fillForm(form, params) {
  let any = false;
  for (const el of form.elements) {
    if (!el.name || !params.has(el.name)) continue;
    any = true;
    if (el.type === "checkbox") el.checked = params.get(el.name) === "1";
    else el.value = params.get(el.name);
  }
  return any;
}

export function saveState(tab, state) {
  const params = new URLSearchParams({ tab, ...state });
  history.replaceState(null, "", "?" + params.toString());
}

function selectTab(name, focus) {
  for (const key of Object.keys(panels)) {
    const tab = document.getElementById("tab-" + key);
    const on = key === name;
    tab.setAttribute("aria-selected", String(on));
    tab.tabIndex = on ? 0 : -1;
    document.getElementById("panel-" + key).hidden = !on;
    if (on && focus) tab.focus();
  }
}

function setupTabs() {
  const names = Object.keys(panels);
  names.forEach((name, i) => {
    const tab = document.getElementById("tab-" + name);
    tab.addEventListener("click", () => {
      selectTab(name, false);
      const params = new URLSearchParams(location.search);
      if (params.get("tab") !== name) history.replaceState(null, "", "?tab=" + name);
    });
    // Arrow keys move between tabs (WAI-ARIA tabs pattern).
    tab.addEventListener("keydown", (ev) => {
      const step = ev.key === "ArrowRight" ? 1 : ev.key === "ArrowLeft" ? -1 : 0;
      if (!step) return;
      const next = names[(i + step + names.length) % names.length];
      selectTab(next, true);
      history.replaceState(null, "", "?tab=" + next);
    });
  });
}

async function suggestions() {
  const gpus = await api("/v1/gpus");
  if (gpus.ok) {
    const list = document.getElementById("gpu-list");
    list.innerHTML = gpus.doc.gpus.map((g) => `<option value="${esc(g.key)}">${esc(g.name)}</option>`).join("");
  }
  const modelList = document.getElementById("model-list");
  let pending;
  const update = async (q) => {
    const r = await api("/v1/models?q=" + encodeURIComponent(q));
    if (r.ok) modelList.innerHTML = r.doc.models.map((m) => `<option value="${esc(m.id)}"></option>`).join("");
  };
  for (const input of document.querySelectorAll('input[name="model"]')) {
    input.addEventListener("input", () => {
      clearTimeout(pending);
      pending = setTimeout(() => update(input.value), 150);
    });
  }
  update("");
}

function setupToken() {
  document.getElementById("token-save").addEventListener("click", () => {
    sessionStorage.setItem(tokenKey, document.getElementById("token").value);
    document.getElementById("auth").hidden = true;
    suggestions();
  });
}

function start() {
  setupTabs();
  setupToken();
  const params = new URLSearchParams(location.search);
  const tab = panels[params.get("tab")] ? params.get("tab") : "check";
  for (const [name, panel] of Object.entries(panels)) panel.init(document.getElementById(name + "-form"));
  selectTab(tab, false);
  // A shared link carries the request: fill the form and answer it at once.
  const form = document.getElementById(tab + "-form");
  if (fillForm(form, params)) form.requestSubmit();
  suggestions();
}

start();
