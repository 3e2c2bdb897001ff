#!/usr/bin/env python3
"""Checks daemon/'s layout (daemon/README.md): each folder is a part whose README.md says what it
"May call:"; a part's files include only its own headers and those of the parts it may call; the
parts form no cycle; the files at the top (main, serve, reload) are included by no part.
  scripts/check-daemon-parts.py [SOURCE_DIR]      exits 1 on a violation, printing each one."""
import os
import re
import sys

root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
daemon = os.path.join(root, "daemon")
errors = []

parts = sorted(d for d in os.listdir(daemon) if os.path.isdir(os.path.join(daemon, d)))
may_call = {}
for part in parts:
    readme = os.path.join(daemon, part, "README.md")
    line = None
    if os.path.exists(readme):
        with open(readme, encoding="utf-8") as f:
            line = next((l for l in f if l.startswith("May call:")), None)
    if line is None:
        errors.append(f"daemon/{part}/README.md: no 'May call:' line")
        may_call[part] = set()
        continue
    # "May call: metrics, wire." or "May call: (no other part of daemon/); store/, crawler/."
    named = re.sub(r"\(.*?\)", "", line[len("May call:"):]).split(";")[0]
    may_call[part] = {w for w in re.findall(r"[a-z_]+", named)}
    for callee in may_call[part] - set(parts):
        errors.append(f"daemon/{part}/README.md: may call '{callee}', which is no part")

include = re.compile(r'^\s*#\s*include\s+"daemon/([^"]+)"', re.M)
edges = {}
for dirpath, _, files in os.walk(daemon):
    for name in sorted(files):
        if not name.endswith((".h", ".cc")):
            continue
        path = os.path.join(dirpath, name)
        rel = os.path.relpath(path, root)
        part = os.path.relpath(dirpath, daemon).split(os.sep)[0]
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for target in include.findall(text):
            target_part = target.split("/")[0] if "/" in target else "."
            if not os.path.exists(os.path.join(daemon, target)):
                errors.append(f"{rel}: includes daemon/{target}, which does not exist")
            if part == "." or target_part == part:
                continue  # the top calls every part; a part calls itself
            if target_part == ".":
                errors.append(f"{rel}: includes daemon/{target}: no part calls the top")
            elif target_part not in may_call.get(part, set()):
                errors.append(f"{rel}: includes daemon/{target}, but {part}/ may not call {target_part}/")
            edges.setdefault(part, set()).add(target_part)

# No cycle among the declared rules (and so among the includes that keep them).
state = {}
def visit(part, path):
    state[part] = "open"
    for callee in sorted(may_call.get(part, ())):
        if state.get(callee) == "open":
            errors.append("cycle: " + " -> ".join(path + [part, callee]))
        elif callee not in state:
            visit(callee, path + [part])
    state[part] = "done"
for part in parts:
    if part not in state:
        visit(part, [])

for e in errors:
    print(e)
if errors:
    sys.exit(1)
for part in parts:
    used = sorted(edges.get(part, ()))
    print(f"{part}: includes {', '.join(used) if used else 'no other part'}"
          f" (may call {', '.join(sorted(may_call[part])) or 'none'})")
print(f"daemon/: {len(parts)} parts, no forbidden include, no cycle")
