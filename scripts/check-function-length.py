#!/usr/bin/env python3
"""`make lint`: no Rust function outside tests is longer than the limit (80 lines).

Lists every function over the limit (lines from its `fn` line to its closing brace) and
exits 1 if there is one. Test code is left out: files under a `tests/` folder, `tests.rs`
files, and `#[cfg(test)]` modules. Usage: scripts/check-function-length.py [--limit N] [--all] [FILE ...]
(`--all` lists the longest functions whatever their length, longest first, 20 of them).
"""

import argparse
import pathlib
import re
import sys

ROOTS = ["crates", "src-tauri", "examples"]
FN = re.compile(r"\bfn\s+([A-Za-z_][A-Za-z0-9_]*)")
CFG_TEST_MOD = re.compile(r"#\[cfg\(test\)\]\s*(pub(\([^)]*\))?\s+)?mod\s+\w+\s*\{")


def code_only(text):
    """The text with comments, strings and char literals blanked (newlines kept), so braces
    and `fn` are only counted where they are code."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        nxt = text[i + 1] if i + 1 < n else ""
        if c == "/" and nxt == "/":
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c == "/" and nxt == "*":
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "r" and re.match(r'r#*"', text[i:]) and not (i and (text[i - 1].isalnum() or text[i - 1] == "_")):
            hashes = re.match(r'r(#*)"', text[i:]).group(1)
            end = text.find('"' + hashes, i + len(hashes) + 2)
            j = n if end < 0 else end + 1 + len(hashes)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "'":
            # A char literal ('x', '\n', '\u{..}'), not a lifetime ('a).
            m = re.match(r"'(\\u\{[0-9a-fA-F]+\}|\\.|[^\\'])'", text[i:])
            if m:
                out.append(" " * len(m.group(0)))
                i += len(m.group(0))
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def matching_brace(code, open_at):
    depth = 0
    for j in range(open_at, len(code)):
        if code[j] == "{":
            depth += 1
        elif code[j] == "}":
            depth -= 1
            if depth == 0:
                return j
    return len(code) - 1


def long_functions(path, code):
    skip = []  # test modules: (start, end) offsets
    for m in CFG_TEST_MOD.finditer(code):
        skip.append((m.start(), matching_brace(code, m.end() - 1)))
    found = []
    for m in FN.finditer(code):
        if any(a <= m.start() <= b for a, b in skip):
            continue
        # The body starts at the first `{` after the signature; a `;` first means no body.
        k = m.end()
        depth = 0
        while k < len(code):
            ch = code[k]
            if ch in "([<":
                depth += 1
            elif ch in ")]>":
                depth -= 1
            elif ch == ";" and depth <= 0:
                k = -1
                break
            elif ch == "{" and depth <= 0:
                break
            k += 1
        if k < 0 or k >= len(code):
            continue
        end = matching_brace(code, k)
        first = code.count("\n", 0, m.start()) + 1
        last = code.count("\n", 0, end) + 1
        found.append((last - first + 1, f"{path}:{first}", m.group(1)))
    return found


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=int, default=80)
    parser.add_argument("--all", action="store_true")
    parser.add_argument("files", nargs="*", help="check these files instead of the repository")
    args = parser.parse_args()
    repo = pathlib.Path(__file__).resolve().parent.parent
    if args.files:
        files = [pathlib.Path(f) for f in args.files]
    else:
        files = []
        for root in ROOTS:
            for path in sorted((repo / root).rglob("*.rs")):
                parts = path.relative_to(repo).parts
                if "tests" in parts or path.name == "tests.rs" or "target" in parts or "node_modules" in parts:
                    continue
                files.append(path.relative_to(repo))
    found = []
    for path in files:
        found += long_functions(path, code_only((repo / path).read_text() if not path.is_absolute() else path.read_text()))
    found.sort(reverse=True)
    if args.all:
        for length, where, name in found[:20]:
            print(f"{length:4} {where} {name}")
        return 0
    over = [f for f in found if f[0] > args.limit]
    for length, where, name in over:
        print(f"{where}: fn {name} is {length} lines (limit {args.limit}): split it", file=sys.stderr)
    if over:
        return 1
    print(f"function length: none over {args.limit} lines outside tests ({len(found)} functions)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
