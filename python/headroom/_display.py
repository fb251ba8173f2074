"""How predictions and plans show themselves: one line for repr(), a few lines for str() (a
terminal), and HTML for Jupyter (_repr_html_): the verdict, a memory bar per GPU, the KV cache
capacity and the changes that start vLLM. Inline styles only, so the HTML survives notebook
sanitizers and renders the same in any page; every string from the document is escaped."""
from __future__ import annotations

from html import escape
from typing import Any, Dict, List, Tuple

# The bar's segments: document key, label, colour. The remainder (outside the budget and unused)
# is drawn last, in grey.
_SEGMENTS: List[Tuple[str, str, str]] = [
    ("weights_gib", "weights", "#4e79a7"),
    ("activation_peak_gib", "activation peak", "#f28e2b"),
    ("non_torch_gib", "non-torch", "#b07aa1"),
    ("cuda_graph_gib", "CUDA graphs", "#edc948"),
    ("kv_cache_gib", "KV cache", "#59a14f"),
]
_REST_COLOUR = "#d3d3d3"
_CELL = "padding:2px 8px;border-bottom:1px solid #eee"


def _num(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return "-" if value is None else str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.2f}"
    return str(value)


def _setup(doc: Dict[str, Any]) -> str:
    model = (doc.get("model") or {}).get("id", "?")
    gpu = doc.get("gpu") or {}
    used = gpu.get("used") or gpu.get("count") or 1
    return f"{model} on {used}x {gpu.get('name', '?')}"


def prediction_summary(doc: Dict[str, Any]) -> str:
    """One line: the verdict, the setup and the KV capacity."""
    if not doc:
        return "empty"
    if doc.get("outcome") == "ok":
        return (f"starts: {_setup(doc)}, {_num(doc.get('kv_cache_tokens'))} KV tokens, "
                f"{_num(doc.get('max_concurrency'))}x at max_model_len {_num((doc.get('settings') or {}).get('max_model_len'))}")
    failure = doc.get("failure") or {}
    return f"will not start: {_setup(doc)}, {failure.get('class', '?')} at {failure.get('phase', '?')}"


def prediction_text(doc: Dict[str, Any]) -> str:
    """A few lines for a terminal: verdict, memory per GPU, KV capacity, failure and changes."""
    lines = [prediction_summary(doc)]
    m = doc.get("memory") or {}
    parts = [f"{label} {_num(m.get(key))}" for key, label, _ in _SEGMENTS if isinstance(m.get(key), (int, float)) and m[key] >= 0]
    lines.append(f"memory per GPU (GiB of {_num(m.get('total_gib'))}): " + ", ".join(parts))
    failure = doc.get("failure")
    if failure:
        lines.append(f"vLLM: {failure.get('message', '')}")
    for c in doc.get("changes") or []:
        what = ", ".join(f"{k.lstrip('-').replace('-', '_')}={v}" for k, v in (c.get("set") or {}).items())
        what += "".join(f", no {k.lstrip('-').replace('-', '_')}" for k in c.get("remove") or [])
        lines.append(f"  change: {what.lstrip(', ')} -> {_num(c.get('kv_cache_tokens'))} KV tokens ({c.get('why', '')})")
    return "\n".join(lines)


def _bar(memory: Dict[str, Any]) -> str:
    total = memory.get("total_gib") or 0
    if not total or total <= 0:
        return ""
    cells, legend, used = [], [], 0.0
    for key, label, colour in _SEGMENTS:
        gib = memory.get(key)
        if not isinstance(gib, (int, float)) or gib <= 0:
            continue
        used += gib
        pct = max(0.0, min(100.0, 100.0 * gib / total))
        title = escape(f"{label}: {gib:.2f} GiB")
        cells.append(f'<div class="headroom-seg" data-part="{escape(key)}" title="{title}" '
                     f'style="width:{pct:.3f}%;flex-shrink:0;background:{colour};height:100%"></div>')
        beyond = f" (more than the GPU's {total:.2f})" if gib > total else ""
        legend.append(f'<span style="margin-right:12px;white-space:nowrap"><span style="display:inline-block;width:10px;'
                      f'height:10px;background:{colour};margin-right:4px"></span>{escape(label)} {gib:.2f} GiB{beyond}</span>')
    rest = max(0.0, total - used)
    cells.append(f'<div class="headroom-seg" data-part="rest" title="{escape(f"not used: {rest:.2f} GiB")}" '
                 f'style="flex:1;background:{_REST_COLOUR};height:100%"></div>')
    legend.append(f'<span style="white-space:nowrap"><span style="display:inline-block;width:10px;height:10px;'
                  f'background:{_REST_COLOUR};margin-right:4px"></span>not used {rest:.2f} GiB of {total:.2f}</span>')
    return ('<div class="headroom-bar" role="img" aria-label="memory per GPU" style="display:flex;width:100%;height:22px;'
            'border:1px solid #888;border-radius:3px;overflow:hidden;margin:6px 0">' + "".join(cells) + "</div>"
            '<div style="font-size:12px;margin-bottom:6px">' + "".join(legend) + "</div>")


def _changes_table(changes: List[Dict[str, Any]]) -> str:
    if not changes:
        return ""
    rows = []
    for c in changes:
        what = ", ".join(f"{k.lstrip('-').replace('-', '_')}={v}" for k, v in (c.get("set") or {}).items())
        what += "".join(f", no {k.lstrip('-').replace('-', '_')}" for k in c.get("remove") or [])
        rows.append(f"<tr><td style='{_CELL}'><code>{escape(what.lstrip(', '))}</code></td>"
                    f"<td style='{_CELL};text-align:right'>{escape(_num(c.get('kv_cache_tokens')))}</td>"
                    f"<td style='{_CELL};text-align:right'>{escape(_num(c.get('max_concurrency')))}x</td>"
                    f"<td style='{_CELL}'>{escape(str(c.get('why', '')))}</td></tr>")
    return ('<div style="margin-top:6px"><b>To start, change one of</b> (each predicted the same way):</div>'
            '<table class="headroom-changes" style="border-collapse:collapse;font-size:13px"><tr><th style="text-align:left">'
            "change</th><th>KV tokens</th><th>concurrency</th><th style='text-align:left'>why</th></tr>"
            + "".join(rows) + "</table>")


def prediction_html(doc: Dict[str, Any]) -> str:
    """The prediction for a notebook: verdict, memory bar, KV capacity, failure message, changes."""
    starts = doc.get("outcome") == "ok"
    colour = "#2e7d32" if starts else "#c62828"
    verdict = "Starts" if starts else "Will not start"
    settings = doc.get("settings") or {}
    failure = doc.get("failure") or {}
    parts = [
        '<div class="headroom-result" style="font-family:sans-serif;max-width:900px;border:1px solid #ccc;'
        'border-radius:4px;padding:8px 12px">',
        f'<div><span class="headroom-verdict" data-outcome="{escape(str(doc.get("outcome", "")))}" '
        f'style="color:{colour};font-weight:bold;font-size:16px">{verdict}</span> '
        f'<span style="color:#555">{escape(_setup(doc))}, vLLM {escape(str(doc.get("vllm_version", "")))}</span></div>',
    ]
    if failure:
        parts.append(f'<div class="headroom-failure" style="color:{colour};margin:4px 0"><code>'
                     f'{escape(str(failure.get("phase", "")))}</code>: {escape(str(failure.get("message", "")))}</div>')
    parts.append(_bar(doc.get("memory") or {}))
    parts.append(f'<div class="headroom-kv">KV cache: <b>{escape(_num(doc.get("kv_cache_tokens")))}</b> tokens '
                 f'({escape(_num(doc.get("num_gpu_blocks")))} blocks), <b>{escape(_num(doc.get("max_concurrency")))}x</b> '
                 f'requests at max_model_len {escape(_num(settings.get("max_model_len")))}</div>')
    parts.append(_changes_table(doc.get("changes") or []))
    notes = doc.get("notes") or []
    if notes:
        parts.append("<details><summary>notes</summary><ul>" + "".join(f"<li>{escape(str(n))}</li>" for n in notes)
                     + "</ul></details>")
    parts.append("</div>")
    return "".join(parts)


def plan_text(doc: Dict[str, Any]) -> str:
    rec = doc.get("recommended")
    if not rec:
        return "nothing fits: " + str((doc.get("no_fit") or {}).get("reason", ""))
    lines = [f"recommended ({rec.get('label', '')}): {prediction_summary(rec.get('prediction') or {})}"]
    python = (rec.get("renderings") or {}).get("python")
    if python:
        lines.append(python)
    for alt in doc.get("alternatives") or []:
        lines.append(f"alternative ({alt.get('label', '')}): {prediction_summary(alt.get('prediction') or {})}")
    return "\n".join(lines)


def plan_html(doc: Dict[str, Any]) -> str:
    """The plan for a notebook: the recommended configuration (its prediction and how to start it),
    then the alternatives; or why nothing fits."""
    rec = doc.get("recommended")
    out = ['<div class="headroom-plan" style="font-family:sans-serif;max-width:900px">']
    if not rec:
        no_fit = doc.get("no_fit") or {}
        lines = [no_fit.get("reason", "")] + list(no_fit.get("details") or [])
        lines += [f"{c.get('option', '')}: {c.get('summary', '')}" for c in no_fit.get("changes") or []]
        out.append('<div class="headroom-verdict" data-outcome="no_fit" style="color:#c62828;font-weight:bold">'
                   "Nothing fits</div><ul>" + "".join(f"<li>{escape(str(e))}</li>" for e in lines if e) + "</ul></div>")
        return "".join(out)
    out.append(f"<div><b>Recommended</b>: {escape(str(rec.get('label', '')))}</div>")
    out.append(prediction_html(rec.get("prediction") or {}))
    python = (rec.get("renderings") or {}).get("python")
    if python:
        out.append(f'<pre style="background:#f6f6f6;padding:6px">{escape(python)}</pre>')
    alts = doc.get("alternatives") or []
    if alts:
        out.append("<div><b>Alternatives</b></div><ul>")
        for alt in alts:
            out.append(f"<li>{escape(str(alt.get('label', '')))}: {escape(prediction_summary(alt.get('prediction') or {}))}</li>")
        out.append("</ul>")
    if doc.get("explanation"):
        out.append("<details><summary>why</summary><ul>" +
                   "".join(f"<li>{escape(str(e))}</li>" for e in doc["explanation"]) + "</ul></details>")
    out.append("</div>")
    return "".join(out)
