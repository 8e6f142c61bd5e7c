#!/usr/bin/env python3
"""Import circles between the files of each crate (README "Where things live").

For every `.rs` file under `crates/*/src` this finds the other files of the same crate it
names through `crate::…` and `super::…` paths (grouped `use crate::{a, b::c}` included),
resolving each path to the deepest module that is a file, and, in `lib.rs`/`mod.rs`, the
relative paths to its own child modules (`child::…`; a bare `mod child;` is no arrow). Inline `#[cfg(test)] mod tests {…}`
blocks are left out (test code may reach back into its parent). It then prints every
strongly connected component of more than one file, and exits 1 if there is one.

The crate root (`lib.rs`) is left out of the circles: it holds what its modules share (the
runtime's `Runtime`, the server's `AppState`) and declares and re-exports them, so it is
both above and below them by construction. `--with-root` counts it too.

`--allow CRATE:FILE,FILE,…` (repeatable) lets a known circle stand without failing: a circle
of CRATE whose files are all in that list is printed as allowed, and exit status stays 0 for
it. A circle that grows past the list (a file joins it), or one in another crate, still
fails, while breaking part of an allowed circle passes. `scripts/test.sh` runs it with no
`--allow`: no crate has a circle, so any fails CI.
"""
import os, re, sys

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")

def modpath(src, f):
    rel = os.path.relpath(f, src)[:-3].split(os.sep)
    if rel[-1] in ("lib", "main", "mod"):
        rel = rel[:-1]
    return tuple(rel)

def expand(prefix, body):
    """`a, b::{c, d}, e::f` inside braces -> list of paths (tuples), each prefixed."""
    out, depth, cur = [], 0, ""
    for ch in body + ",":
        if ch == "{": depth += 1
        if ch == "}": depth -= 1
        if ch == "," and depth == 0:
            item = cur.strip()
            cur = ""
            if not item: continue
            m = re.match(r"^([\w:]*?)(?:::)?\{(.*)\}$", item, re.S)
            if m:
                sub = tuple(p for p in m.group(1).split("::") if p)
                out += expand(prefix + sub, m.group(2))
            else:
                out.append(prefix + tuple(p for p in item.split(" as ")[0].split("::") if p))
        else:
            cur += ch
    return out

def strip_tests(text):
    m = re.search(r"#\[cfg\(test\)\]\s*mod \w+\s*\{", text)
    return text[: m.start()] if m else text

def crate_graph(src):
    files = {}
    for d, _, fs in os.walk(src):
        for f in fs:
            if f.endswith(".rs"):
                p = os.path.join(d, f)
                files[modpath(src, p)] = p
    edges = {m: set() for m in files}
    skip_root = "--with-root" not in sys.argv
    for me, path in files.items():
        text = strip_tests(open(path, encoding="utf-8").read())
        text = re.sub(r"//[^\n]*", "", text)
        is_dir_mod = os.path.basename(path) in ("mod.rs", "lib.rs", "main.rs")
        paths = []
        for m in re.finditer(r"\b((?:crate|super)(?:::super)*)::\{", text):
            # find the matching brace
            i, depth = m.end(), 1
            while depth and i < len(text):
                depth += {"{": 1, "}": -1}.get(text[i], 0)
                i += 1
            paths += [(m.group(1),) + p for p in expand((), text[m.end(): i - 1])]
        for m in re.finditer(r"\b((?:crate|super)(?:::super)*)((?:::\w+)+)", text):
            paths.append((m.group(1),) + tuple(m.group(2).split("::")[1:]))
        if is_dir_mod:
            # A module file reaches its own children by relative paths (`engine::make::…`).
            for child in re.findall(r"^\s*(?:pub(?:\([\w:]+\))?\s+)?mod (\w+);", text, re.M):
                if re.search(r"(?<![\w:])" + child + r"::", text):
                    edges[me].add(me + (child,)) if me + (child,) in files else None
        for p in paths:
            head = p[0].split("::")
            rest = list(p[1:])
            if head[0] == "crate":
                base = ()
            else:
                base = me if is_dir_mod else me[:-1]
                base = base[: len(base) - (len(head) - 1)] if len(head) > 1 else base
                # `super` from a file module is its parent; from mod.rs it is the dir's parent
                base = base[:-1] if is_dir_mod else base
            full = tuple(base) + tuple(rest)
            for k in range(len(full), -1, -1):
                if full[:k] in files:
                    if full[:k] != me:
                        edges[me].add(full[:k])
                    break
    if skip_root:
        edges.pop((), None)
        for e in edges.values():
            e.discard(())
    return files, edges

def sccs(edges):
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]
    def visit(v):
        index[v] = low[v] = n[0]; n[0] += 1
        stack.append(v); on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w); low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop(); on.discard(w); comp.append(w)
                if w == v: break
            out.append(comp)
    sys.setrecursionlimit(10000)
    for v in edges:
        if v not in index:
            visit(v)
    return out

def allowances(argv):
    """`--allow CRATE:a,b/c` arguments -> {crate: [set of module paths]}."""
    out = {}
    for i, a in enumerate(argv):
        if a == "--allow" and i + 1 < len(argv):
            crate, _, names = argv[i + 1].partition(":")
            mods = {tuple(n.strip().split("/")) if n.strip() != "lib" else () for n in names.split(",") if n.strip()}
            out.setdefault(crate, []).append(mods)
    return out

allowed = allowances(sys.argv)
found = False
crates = sorted(os.listdir(os.path.join(root, "crates")))
for c in crates:
    src = os.path.join(root, "crates", c, "src")
    if not os.path.isdir(src): continue
    files, edges = crate_graph(src)
    n_edges = sum(len(e) for e in edges.values())
    circles = [sorted(x) for x in sccs(edges) if len(x) > 1]
    print(f"{c}: {len(files)} files, {n_edges} arrows, {len(circles)} circle(s)")
    for comp in circles:
        names = ["/".join(m) or "lib" for m in comp]
        if any(set(comp) <= mods for mods in allowed.get(c, [])):
            print("  circle (allowed): " + ", ".join(names))
        else:
            found = True
            print("  circle: " + ", ".join(names))
        if "-v" in sys.argv:
            s = set(comp)
            for m in comp:
                for w in sorted(edges[m] & s):
                    print(f"    {'/'.join(m) or 'lib'} -> {'/'.join(w) or 'lib'}")
sys.exit(1 if found else 0)
