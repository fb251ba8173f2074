#!/usr/bin/python3
"""A stand-in for `vllm serve` in headroom's tests: it replays a real vLLM startup or failure log
line by line, with a worker child process (the EngineCore) whose pid appears in the log as vLLM
prints it, then serves until it is stopped, exits with the log's status, or dies by a signal.

What it does is chosen by a scenario file (JSON, path in $FAKE_VLLM_SCENARIO): a list of rules,
the first whose "when" matches the command line wins:

  {"when": {"max_model_len_above": 100000},   # optional: --max-model-len greater than this
   "log": "file.log",            # relative to the scenario file
   "line_delay": 0.01,           # seconds between lines
   "then": "exit" | "serve" | "kill_self" | "binary" | "long_line",
   "exit_code": 1,               # for "exit"
   "serve_seconds": 0.5,         # for "serve": stop on its own after this long (default: never)
   "ignore_sigint": false,       # for "serve": the first SIGINT is not enough
   "worker_leaves_group": false, # the worker calls setsid(), as a daemonised helper would
   "pid_file": "path"}           # where to write "SERVER_PID WORKER_PID"

Each invocation appends its arguments, one line, to $FAKE_VLLM_ARGV_LOG when that is set.

Signals while serving: SIGINT/SIGTERM print vLLM's shutdown line, end the worker, exit 0.
"""
import json
import os
import re
import signal
import subprocess
import sys
import time

PID_TAG = re.compile(r"\((\w+)(?: pid=)(\d+)\)")


def option(argv, name):
    for i, word in enumerate(argv):
        if word == name and i + 1 < len(argv):
            return argv[i + 1]
        if word.startswith(name + "="):
            return word[len(name) + 1:]
    return None


def choose(rules, argv):
    for rule in rules:
        when = rule.get("when", {})
        above = when.get("max_model_len_above")
        if above is not None:
            value = option(argv, "--max-model-len")
            if value is None or int(value) <= above:
                continue
        return rule
    sys.exit("fake vllm: no rule matches " + " ".join(argv))


def start_worker(leave_group):
    # The EngineCore: a child that lives as long as the server (or longer, if orphaned).
    code = "import os,time\n" + ("os.setsid()\n" if leave_group else "") + "time.sleep(600)\n"
    return subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.DEVNULL)


def replay(path, delay, server_pid, worker_pid):
    def tag(m):
        return "(%s pid=%d)" % (m.group(1), server_pid if m.group(1) == "APIServer" else worker_pid)
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            sys.stdout.write(PID_TAG.sub(tag, line))
            sys.stdout.flush()
            time.sleep(delay)


def serve(rule, worker):
    interrupts = []

    def stop(signum, frame):
        if signum == signal.SIGINT and rule.get("ignore_sigint") and not interrupts:
            interrupts.append(signum)
            print("(APIServer pid=%d) INFO: caught SIGINT, finishing requests first" % os.getpid(), flush=True)
            return
        print("(APIServer pid=%d) INFO:     Shutting down (signal %d)" % (os.getpid(), signum), flush=True)
        worker.terminate()
        worker.wait()
        sys.exit(0)

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    deadline = time.time() + rule.get("serve_seconds", 1e9)
    while time.time() < deadline:
        time.sleep(0.02)
    worker.terminate()
    worker.wait()


def main():
    scenario_path = os.environ["FAKE_VLLM_SCENARIO"]
    with open(scenario_path) as f:
        rules = json.load(f)
    argv = sys.argv[1:]
    if os.environ.get("FAKE_VLLM_ARGV_LOG"):
        with open(os.environ["FAKE_VLLM_ARGV_LOG"], "a") as f:
            f.write(" ".join(argv) + "\n")
    rule = choose(rules, argv)
    worker = start_worker(rule.get("worker_leaves_group", False))
    if "pid_file" in rule:
        with open(rule["pid_file"], "w") as f:
            f.write("%d %d\n" % (os.getpid(), worker.pid))
    if "log" in rule:
        log = os.path.join(os.path.dirname(os.path.abspath(scenario_path)), rule["log"])
        replay(log, rule.get("line_delay", 0.01), os.getpid(), worker.pid)
    then = rule.get("then", "exit")
    if then == "serve":
        serve(rule, worker)
        return 0
    if then == "kill_self":
        os.kill(os.getpid(), signal.SIGKILL)  # the server dies; the worker is left behind
    if then == "binary":
        sys.stdout.buffer.write(bytes(range(256)) * 64)
        sys.stdout.flush()
    if then == "long_line":
        chunk = b"x" * (1 << 20)
        for _ in range(100):
            sys.stdout.buffer.write(chunk)
        sys.stdout.buffer.write(b"\n")
        sys.stdout.flush()
    worker.terminate()
    worker.wait()
    return rule.get("exit_code", 0)


if __name__ == "__main__":
    sys.exit(main())
