#!/usr/bin/python3
"""Lists the functions in C++ sources that are longer than a limit (default 120 lines).

A function's length runs from the first line of its signature to its closing brace. The scan
strips comments, string and character literals (raw strings included), then matches braces: a
brace opened at namespace or class scope after a parenthesised parameter list opens a function
body; lambdas and local classes count as part of the function they sit in.

usage: scripts/function_lengths.py [--max N] [--allow FILE] [--strict] PATH...
  PATH      .cc/.h files, or folders searched for them
  --allow   known exceptions, one "path:function" a line ('#' comments): printed, not failed
  --strict  fail on the exceptions too

exit: 0 when every function over the limit is an allowed exception (and, with --strict, none is
over), 1 otherwise, 2 on bad usage. An allowed exception that is no longer over the limit is
reported so that the list shrinks.
"""
import argparse
import os
import re
import sys

IDENT = re.compile(r"[A-Za-z_~][A-Za-z_0-9:~<>,\s]*$")


def strip_code(text):
    """Comments and literals replaced by spaces; newlines kept so line numbers hold."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "R" and text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            paren = text.find("(", i + 2)
            delim = text[i + 2:paren]
            end = text.find(")" + delim + '"', paren)
            j = n if end < 0 else end + len(delim) + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == '"' or (c == "'" and not (i > 0 and text[i - 1].isalnum())):
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def function_name(header):
    """The name before the parameter list of a function header, or None."""
    depth = 0
    for k, c in enumerate(header):
        if c == "(" and depth == 0:
            before = header[:k].rstrip()
            m = re.search(r"(operator\s*\S+|[A-Za-z_~][A-Za-z_0-9]*(?:\s*::\s*~?[A-Za-z_][A-Za-z_0-9]*)*)$", before)
            return re.sub(r"\s+", "", m.group(1)) if m else None
        if c in "<[":
            depth += 1
        elif c in ">]":
            depth = max(0, depth - 1)
    return None


def classify(header):
    """What a brace opens at namespace or class scope: 'scope', 'function' or 'other'."""
    h = " ".join(header.split())
    if re.search(r"\bnamespace\b", h) or h.startswith("extern"):
        return "scope"
    if re.search(r"\b(class|struct|union)\b[^()=]*$", h) or re.search(r"\benum\b", h):
        return "scope"
    if "(" in h and "=" not in h.split("(")[0] and function_name(h):
        return "function"
    return "other"


def functions(path):
    """(name, first line, last line) of each function defined in the file."""
    with open(path, encoding="utf-8", errors="replace") as f:
        code = strip_code(f.read())
    found = []
    stack = []  # per open brace: (kind, name, start line)
    header_start = 0
    line = 1
    for i, c in enumerate(code):
        if c == "\n":
            line += 1
        if c in ";{}":
            if c == "{":
                in_function = any(kind != "scope" for kind, _, _ in stack)
                header = code[header_start:i]
                kind = "other" if in_function else classify(header)
                stripped = len(header) - len(header.lstrip())
                start = line - header[stripped:].count("\n")
                stack.append((kind, function_name(" ".join(header.split())) if kind == "function" else None, start))
            elif c == "}" and stack:
                kind, name, start = stack.pop()
                if kind == "function":
                    found.append((name, start, line))
            header_start = i + 1
        elif c == ":" and re.fullmatch(r"\s*(public|private|protected)\s*", code[header_start:i]):
            header_start = i + 1  # an access label ends a header as ';' does
    return found


def sources(paths):
    for p in paths:
        if os.path.isdir(p):
            for root, _, files in os.walk(p):
                for name in sorted(files):
                    if name.endswith((".cc", ".h")):
                        yield os.path.join(root, name)
        else:
            yield p


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--max", type=int, default=120)
    ap.add_argument("--allow")
    ap.add_argument("--strict", action="store_true")
    args = ap.parse_args()
    allowed = set()
    if args.allow:
        with open(args.allow, encoding="utf-8") as f:
            for raw in f:
                entry = raw.split("#", 1)[0].strip()
                if entry:
                    allowed.add(entry)
    long_ones = []
    for path in sorted(set(sources(args.paths))):
        rel = os.path.relpath(path)
        for name, first, last in functions(path):
            if last - first + 1 > args.max:
                long_ones.append((last - first + 1, f"{rel}:{name}", first))
    failed = False
    seen = set()
    for length, key, first in sorted(long_ones, reverse=True):
        seen.add(key)
        if key in allowed and not args.strict:
            print(f"{length:5d} lines  {key} (line {first}; known, to be split)")
        else:
            print(f"{length:5d} lines  {key} (line {first}): longer than {args.max} lines")
            failed = True
    for key in sorted(allowed - seen):
        print(f"      ok     {key}: no longer over {args.max} lines; remove it from {args.allow}")
    if not long_ones:
        print(f"no function is longer than {args.max} lines")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
