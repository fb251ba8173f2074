"""Notebook display: _repr_html_ (verdict, memory bar, KV capacity, changes), the text fallback,
and the HTML in a real browser (headless Debian chromium + selenium, as tests/browser)."""
import os
import re
import shutil
import tempfile
from pathlib import Path

import pytest

import headroom
from conftest import BUILD

SMALL = "codellama/CodeLlama-7b-hf"
BIG = "meta-llama/Llama-3.1-70B-Instruct"


def test_prediction_html_shows_verdict_bar_capacity():
    r = headroom.check(SMALL, gpu="H100", max_model_len=4096)
    html = r._repr_html_()
    assert 'data-outcome="ok"' in html and ">Starts<" in html
    assert html.count('class="headroom-seg"') == 6  # weights, activation, non-torch, graphs, KV cache, not used
    assert f"{r.kv_cache_tokens:,}" in html
    assert f"KV cache {r.memory.kv_cache_gib:.2f} GiB" in html
    assert "headroom-changes" not in html


def test_failed_prediction_html_shows_message_and_changes():
    r = headroom.check(BIG, gpu="H100")
    html = r._repr_html_()
    assert ">Will not start<" in html and 'data-outcome="fails"' in html
    assert "headroom-changes" in html
    assert html.count("<tr>") == len(r.changes) + 1
    from html import escape
    assert escape(r.failure.message) in html


def test_text_fallback():
    r = headroom.check(BIG, gpu="H100")
    assert repr(r).startswith("<headroom.Prediction will not start: meta-llama/Llama-3.1-70B-Instruct on 1x")
    text = str(r)
    assert "vLLM: " + r.failure.message in text
    assert text.count("  change: ") == len(r.changes)
    ok = headroom.check(SMALL, gpu="H100", max_model_len=4096)
    assert f"{ok.kv_cache_tokens:,} KV tokens" in repr(ok)


def test_plan_html_and_text():
    p = headroom.plan("meta-llama/Llama-3.1-8B-Instruct", gpu="A100", context=8192)
    html = p._repr_html_()
    assert "<b>Recommended</b>" in html and 'class="headroom-bar"' in html
    assert "from vllm import LLM" in html
    assert str(p).startswith("recommended (")
    none = headroom.plan("meta-llama/Llama-3.1-70B-Instruct", gpu="T4", gpus=1)
    assert 'data-outcome="no_fit"' in none._repr_html_() and str(none).startswith("nothing fits")


def test_html_escapes_what_it_shows(tmp_path):
    model = tmp_path / "<i>model&"
    model.mkdir()
    shutil.copyfile(Path(__file__).resolve().parents[1] / "data" / "models" / "llama_gqa.json", model / "config.json")
    r = headroom.check(str(model), gpu="H100", max_model_len=2048)
    assert "<i>model" not in r._repr_html_() and "&lt;i&gt;model&amp;" in r._repr_html_()


def _browser():
    if not (os.access("/usr/bin/chromium", os.X_OK) and os.access("/usr/bin/chromedriver", os.X_OK)):
        pytest.skip("Debian's chromium and chromium-driver are not installed (scripts/setup.sh --test)")
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    profile = tempfile.mkdtemp(prefix="headroom-chromium-")
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage", f"--user-data-dir={profile}",
                 "--window-size=1000,900"):
        options.add_argument(flag)
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def test_notebook_html_in_a_real_browser(tmp_path):
    from selenium.webdriver.common.by import By
    driver = _browser()
    ok = headroom.check(SMALL, gpu="H100", max_model_len=4096)
    failed = headroom.check(BIG, gpu="H100")
    page = tmp_path / "notebook.html"
    page.write_text("<!doctype html><html><body>" + ok._repr_html_() + failed._repr_html_() + "</body></html>")
    shots = BUILD / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    try:
        driver.get(page.as_uri())
        verdicts = driver.find_elements(By.CLASS_NAME, "headroom-verdict")
        assert [v.text for v in verdicts] == ["Starts", "Will not start"]
        bars = driver.find_elements(By.CLASS_NAME, "headroom-bar")
        assert len(bars) == 2
        # The bar of the prediction that starts: each part as wide as its share of the GPU's memory.
        for bar, doc in [(bars[0], ok.to_dict())]:
            width = bar.size["width"] - 2  # inside its 1px border
            assert width > 300
            segs = {s.get_attribute("data-part"): s.size["width"] for s in bar.find_elements(By.CLASS_NAME, "headroom-seg")}
            total = doc["memory"]["total_gib"]
            for key, gib in doc["memory"].items():
                if key in segs and isinstance(gib, (int, float)) and gib > 0:
                    assert abs(segs[key] - width * gib / total) <= 3, (key, segs[key], width * gib / total)
        rows = driver.find_elements(By.CSS_SELECTOR, ".headroom-changes tr")
        assert len(rows) == len(failed.changes) + 1 and all(r.is_displayed() for r in rows)
        assert failed.failure.message[:60] in driver.find_element(By.CLASS_NAME, "headroom-failure").text
        assert driver.save_screenshot(str(shots / "python_notebook.png"))
        assert (shots / "python_notebook.png").stat().st_size > 10000
    finally:
        driver.quit()
