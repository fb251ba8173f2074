"""The web page of `headroom serve` in headless Chromium (Debian's chromium + chromium-driver,
driven by python3-selenium): load the page from the server the test started, fill a check and
read the verdict from the DOM, run a plan and copy its command, diagnose a pasted log, open a
shared link, switch tabs with the keyboard, and save screenshots (desktop and phone widths).

usage: page_test.py URL SCREENSHOT_DIR LOG_FILE
"""
import json
import os
import sys
import tempfile
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import WebDriverWait

url, shots, log_file = sys.argv[1], sys.argv[2], sys.argv[3]
os.makedirs(shots, exist_ok=True)
profile = tempfile.mkdtemp(prefix="headroom-chromium-")
options = webdriver.ChromeOptions()
options.binary_location = "/usr/bin/chromium"
for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--disable-dev-shm-usage", f"--user-data-dir={profile}", "--window-size=1280,1400"):
    options.add_argument(flag)
driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
wait = WebDriverWait(driver, 30)
failures = []


def expect(what, cond):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def api(path, body):
    req = urllib.request.Request(url + path, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    return json.load(urllib.request.urlopen(req))


def fill(form, name, value):
    el = driver.find_element(By.CSS_SELECTOR, f"#{form} [name='{name}']")
    el.clear()
    el.send_keys(value)


try:
    # ---- check: a configuration that starts ----
    driver.get(url + "/")
    wait.until(ec.presence_of_element_located((By.ID, "check-form")))
    fill("check-form", "model", "codellama/CodeLlama-7b-hf")
    fill("check-form", "gpu", "H100")
    fill("check-form", "vllm_version", "0.19.0")
    fill("check-form", "max_model_len", "4096")
    driver.find_element(By.CSS_SELECTOR, "#check-form button[type='submit']").click()
    verdict = wait.until(ec.presence_of_element_located((By.ID, "verdict")))
    expected = api("/v1/check", {"model": "codellama/CodeLlama-7b-hf", "gpu": "H100", "vllm_version": "0.19.0",
                                 "flags": {"max_model_len": 4096}})
    expect("check verdict is 'Starts'", verdict.text == "Starts" and verdict.get_attribute("data-outcome") == "ok")
    kv = driver.find_element(By.ID, "kv-tokens").text
    expect(f"KV tokens shown as the API says ({kv} vs {expected['kv_cache_tokens']})",
           kv.replace(",", "") == str(expected["kv_cache_tokens"]))
    rng = driver.find_element(By.ID, "kv-range")
    want = f"{expected['kv_cache_range']['kv_tokens_low']:,}–{expected['kv_cache_range']['kv_tokens_high']:,}"
    expect(f"the stated KV range shown as the API says ({rng.text} vs {want})",
           rng.text == want and "inside what the calibration covers" in rng.get_attribute("title"))
    expect("one memory bar for one GPU", len(driver.find_elements(By.CSS_SELECTOR, "#check-result .bar[role='img']")) == 1)
    expect("the URL carries the request", "model=codellama%2FCodeLlama-7b-hf" in driver.current_url)
    shared = driver.current_url
    driver.save_screenshot(os.path.join(shots, "check.png"))

    # ---- check: a pasted command that fails, with vLLM's message; two GPUs, two bars ----
    driver.find_element(By.CSS_SELECTOR, "#check-form [name='command']").send_keys(
        "vllm serve meta-llama/Llama-3.1-70B-Instruct -tp 2 --max-model-len 131072")
    fill("check-form", "gpu", "L40S")
    driver.find_element(By.CSS_SELECTOR, "#check-form button[type='submit']").click()
    wait.until(lambda d: d.find_element(By.ID, "verdict").get_attribute("data-outcome") == "fails")
    message = driver.find_element(By.ID, "verdict-message").text
    expected = api("/v1/check", {"command": "vllm serve meta-llama/Llama-3.1-70B-Instruct -tp 2 --max-model-len 131072",
                                 "gpu": "L40S", "vllm_version": "0.19.0"})
    expect("vLLM's message shown", expected["failure"] is not None and message == expected["failure"]["message"])
    expect("one memory bar for tp=2, marked for two GPUs",
           len(driver.find_elements(By.CSS_SELECTOR, "#check-result .bar[role='img']")) == 1 and
           "× 2 GPUs" in driver.find_element(By.CSS_SELECTOR, "#check-result .gpu-count").text)
    shown = [li.text for li in driver.find_elements(By.CSS_SELECTOR, "#changes li")]
    expect(f"the changes the API suggests are listed ({shown} vs {expected['changes']})",
           len(shown) == len(expected["changes"]) and len(shown) > 0 and
           all(next(iter(c["set"])) in text for c, text in zip(expected["changes"], shown)))
    driver.save_screenshot(os.path.join(shots, "check-fails.png"))

    # ---- a shared link answers by itself ----
    driver.get(shared)
    verdict = wait.until(ec.presence_of_element_located((By.ID, "verdict")))
    expect("shared link reproduces the check", verdict.text == "Starts")

    # ---- plan, with the keyboard to reach the tab ----
    tab = driver.find_element(By.ID, "tab-check")
    tab.send_keys(Keys.ARROW_RIGHT)
    expect("arrow key selects the plan tab", driver.find_element(By.ID, "tab-plan").get_attribute("aria-selected") == "true")
    expect("plan tab has focus", driver.switch_to.active_element.get_attribute("id") == "tab-plan")
    fill("plan-form", "model", "codellama/CodeLlama-7b-hf")
    fill("plan-form", "gpu", "L4")
    fill("plan-form", "vllm_version", "0.19.0")
    fill("plan-form", "context", "4096")
    fill("plan-form", "concurrency", "2")
    driver.find_element(By.CSS_SELECTOR, "#plan-form [name='concurrency']").send_keys(Keys.ENTER)
    command = wait.until(ec.presence_of_element_located((By.ID, "plan-command")))
    expected = api("/v1/plan", {"model": "codellama/CodeLlama-7b-hf", "gpu": "L4", "vllm_version": "0.19.0",
                                "context": 4096, "concurrency": 2})
    expect("plan command as the API renders it", command.text == expected["recommended"]["renderings"]["vllm_serve"].strip())
    expect("alternatives listed", len(driver.find_elements(By.CSS_SELECTOR, "#plan-result .config")) ==
           1 + len(expected["alternatives"]))
    copy = driver.find_element(By.CSS_SELECTOR, "button.copy[data-copy='plan-command']")
    copy.click()
    wait.until(lambda d: copy.text != "Copy command")
    expect("copy button answers", copy.text in ("Copied", "Selected: press Ctrl+C"))
    driver.save_screenshot(os.path.join(shots, "plan.png"))

    # ---- diagnose a pasted log ----
    driver.find_element(By.ID, "tab-diagnose").click()
    log = open(log_file, encoding="utf-8").read()
    area = driver.find_element(By.CSS_SELECTOR, "#diagnose-form [name='log']")
    driver.execute_script("arguments[0].value = arguments[1];", area, log)
    driver.find_element(By.CSS_SELECTOR, "#diagnose-form button[type='submit']").click()
    diagnosis = wait.until(ec.presence_of_element_located((By.ID, "diagnosis")))
    expect(f"diagnosis class kv_cache_insufficient (got {diagnosis.get_attribute('data-class')})",
           diagnosis.get_attribute("data-class") == "kv_cache_insufficient")
    expect("a fix with its command", len(driver.find_elements(By.CSS_SELECTOR, "#diagnose-result pre.command")) >= 1)
    driver.save_screenshot(os.path.join(shots, "diagnose.png"))

    # ---- an error is shown as such ----
    driver.find_element(By.ID, "tab-check").click()
    driver.find_element(By.CSS_SELECTOR, "#check-form [name='command']").clear()
    fill("check-form", "model", "acme/no-such-model")
    driver.find_element(By.CSS_SELECTOR, "#check-form button[type='submit']").click()
    err = wait.until(ec.presence_of_element_located((By.CSS_SELECTOR, "#check-result .error")))
    expect("unknown model shown as not_found", err.get_attribute("data-error-code") == "not_found")

    # ---- a phone's width: no horizontal scrolling ----
    driver.set_window_size(390, 844)
    driver.get(shared)
    wait.until(ec.presence_of_element_located((By.ID, "verdict")))
    width = driver.execute_script("return document.documentElement.scrollWidth")
    expect(f"readable on a phone (page width {width} at 390)", width <= 390)
    driver.save_screenshot(os.path.join(shots, "check-phone.png"))

    # ---- a plan on 8 GPUs at a phone's width: one bar per configuration, not one per GPU ----
    # (regression: 8 x H100 drew 32 identical bars, and the page was 5,857 px tall on a phone)
    driver.find_element(By.ID, "tab-plan").click()
    fill("plan-form", "model", "meta-llama/Llama-3.1-70B-Instruct")
    fill("plan-form", "gpu", "H100")
    fill("plan-form", "gpus", "8")
    fill("plan-form", "context", "32768")
    fill("plan-form", "concurrency", "8")
    driver.find_element(By.CSS_SELECTOR, "#plan-form button[type='submit']").click()
    wait.until(ec.presence_of_element_located((By.ID, "plan-command")))
    configs = len(driver.find_elements(By.CSS_SELECTOR, "#plan-result .config"))
    bars = len(driver.find_elements(By.CSS_SELECTOR, "#plan-result .bar[role='img']"))
    expect(f"one bar per configuration ({bars} bars, {configs} configurations)", bars <= configs + 1)
    counts = [e.text for e in driver.find_elements(By.CSS_SELECTOR, "#plan-result .gpu-count")]
    expect(f"bars say how many GPUs they stand for ({counts})", any("× 8 GPUs" in c for c in counts))
    width = driver.execute_script("return document.documentElement.scrollWidth")
    height = driver.execute_script("return document.documentElement.scrollHeight")
    expect(f"the 8-GPU plan fits a phone's width (page width {width} at 390)", width <= 390)
    expect(f"the 8-GPU plan is not a long scroll on a phone (page height {height} px)", height < 3500)
    print(f"8-GPU plan on a phone: {bars} bars for {configs} configurations, page {width} x {height} px", flush=True)
    driver.save_screenshot(os.path.join(shots, "plan-8gpu-phone.png"))

    # ---- no request left the server's origin (no CDN) ----
    origins = driver.execute_script(
        "return performance.getEntriesByType('resource').map(e => new URL(e.name).origin)")
    expect(f"every resource from the server ({set(origins)})", all(o == url for o in origins))
except Exception:
    driver.save_screenshot(os.path.join(shots, "failure.png"))
    print("FAIL: the page at", driver.current_url, "(screenshot: failure.png)")
    raise
finally:
    driver.quit()

if failures:
    sys.exit(1)
print("browser: all passed")
