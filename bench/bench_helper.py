#!/usr/bin/env python3
"""Helpers for bench/run.sh (standard library only).

  bench_helper.py rpc-url BASE_URL
      Fetch BASE_URL/.well-known/agent-card.json and print supportedInterfaces[0].url,
      after checking it is a JSON-RPC 1.0 interface.

  bench_helper.py check RESPONSE_FILE TEXT
      RESPONSE_FILE holds the body of one SendMessage response. Exit 0 only if it is a
      JSON-RPC result carrying a TASK_STATE_COMPLETED task whose "echo" artifact's first
      text part is exactly TEXT.

  bench_helper.py soak RESULTS_DIR
      Read soak_rss.csv and the soak_*.txt wrk outputs written by `run.sh soak`; print, per
      server, the requests it served, its RSS after the first minute, at the end and at most,
      and the least-squares slope of RSS over time after the first minute (MiB/min); write
      soak.json and soak.md next to them. Exit 1 if a wrk process saw errors.

  bench_helper.py first RESULTS_DIR
      Read the first_r<round>_<server>_c<conns>.txt files written by `run.sh first` (a
      FIRST_RESULT line from examples/first_event.rs, plus a PROC line) and print, per level
      and server, the medians over rounds of streams/s, events/s, first-event p50/p90/p99,
      whole-stream p50 and the server's CPU per stream; write first.json next to them.
      Exit 1 if any phase saw errors or streams that did not end completed.

  bench_helper.py summarize RESULTS_DIR
      Read the phase files written by run.sh (r<round>_<server>_c<conns>.txt: wrk output with
      a WRK_RESULT line from send_message.lua, plus a PROC line with server CPU/RSS), print
      the comparison table with Sextant's per-level ratio to each peer that ran (the bare
      upper limit, the JS SDK, the Python SDK), and write summary.json and summary.md next to
      them. When the phases counted SSE events (STREAM=1), the table adds events/s and events
      per stream, and the ratios of events/s.
      Exit 1 if any phase saw errors or non-completed responses (the numbers are then void).
"""

from __future__ import annotations

import json
import re
import statistics
import sys
import urllib.request
from pathlib import Path

LABELS = {
    "sextant": "Sextant",
    "bare": "bare axum (limit)",
    "bare_grpc": "bare gRPC (limit)",
    "js": "JS @a2a-js/sdk 1.3.0",
    "python": "Python a2a-sdk 1.3.0",
}
# The servers Sextant is compared with, in table order: the bare upper limit, then the SDKs.
PEERS = ("bare", "js", "python")
PEER_NAMES = {"bare": "bare", "js": "JS", "python": "Python"}


# run.sh's BINDINGS: the same Sextant driven over another binding than JSON-RPC.
BINDING_NAMES = {"sextant_rest": "HTTP+JSON", "sextant_grpc": "gRPC"}


def label(server: str) -> str:
    """`sextant_j1m` is the Sextant labelled j1m in run.sh's JOURNALS or BINARIES;
    `sextant_rest` / `sextant_grpc` are Sextant over another binding (BINDINGS)."""
    if server in BINDING_NAMES:
        return f"Sextant {BINDING_NAMES[server]}"
    if server.startswith("sextant_"):
        return f"Sextant {server[len('sextant_'):]}"
    return LABELS.get(server, server)


def server_order(names) -> list[str]:
    """Sextant on the empty journal first, then the other Sextants, then the peers (PEERS),
    the bare server over gRPC (`bare_grpc`) after the bare server."""

    def key(n: str):
        base = n.split("_", 1)[0]
        return (n != "sextant", PEERS.index(base) if base in PEERS else -1, n)

    return sorted(names, key=key)


PHASE_RE = re.compile(r"^r(\d+)_(\w+?)_c(\d+)\.txt$")


def rpc_url(base_url: str) -> int:
    with urllib.request.urlopen(base_url.rstrip("/") + "/.well-known/agent-card.json", timeout=30) as r:
        card = json.load(r)
    iface = card["supportedInterfaces"][0]
    if iface.get("protocolBinding") != "JSONRPC" or iface.get("protocolVersion") != "1.0":
        print(f"unexpected first interface: {iface}", file=sys.stderr)
        return 1
    print(iface["url"])
    return 0


def check(path: str, text: str) -> int:
    raw = Path(path).read_text()
    try:
        doc = json.loads(raw)
        task = doc["result"]["task"]
        state = task["status"]["state"]
        echo = [a for a in task.get("artifacts", []) if a.get("name") == "echo"]
        got = echo[0]["parts"][0].get("text") if echo else None
    except (ValueError, KeyError, IndexError, TypeError) as e:
        print(f"not a SendMessage task result ({e!r}): {raw[:500]}", file=sys.stderr)
        return 1
    if state != "TASK_STATE_COMPLETED" or got != text:
        print(f"expected a completed task echoing {text!r}, got state={state} echo={got!r}", file=sys.stderr)
        return 1
    print(f"ok: task {task['id']} {state}, echo artifact {got!r}")
    return 0


def parse_phase(path: Path) -> dict:
    wrk = proc = None
    for line in path.read_text(errors="replace").splitlines():
        if line.startswith("WRK_RESULT "):
            wrk = json.loads(line[len("WRK_RESULT "):])
        elif line.startswith("PROC "):
            proc = json.loads(line[len("PROC "):])
    if wrk is None:
        raise SystemExit(f"{path}: no WRK_RESULT line (did wrk run the Lua script?)")
    secs = wrk["duration_us"] / 1e6
    errors = sum(wrk[k] for k in wrk if k.startswith("errors_"))
    row = {
        "rps": wrk["requests"] / secs if secs else 0.0,
        "requests": wrk["requests"],
        "p50_ms": wrk["p50_us"] / 1000,
        "p99_ms": wrk["p99_us"] / 1000,
        "errors": errors,
        "bad": wrk["bad"],
        "events": wrk.get("events", 0),
        "eps": wrk.get("events", 0) / secs if secs else 0.0,
        "verified": wrk["verified"],
        "cpu_ms_per_req": None,
        "rss_mib": None,
    }
    if proc:
        if wrk["requests"]:
            row["cpu_ms_per_req"] = proc["cpu_ms"] / wrk["requests"]
        row["rss_mib"] = proc["rss_kib"] / 1024
    return row


def fmt(v, spec: str) -> str:
    return "-" if v is None else format(v, spec)


def fmt_ratio(ratio: float) -> str:
    return f"{ratio:.1f}" if ratio >= 1 else f"{ratio:.3f}"


def per_round_ratios(phases, conns: int, rounds, a: str, b: str, key: str) -> list[float]:
    """a's `key` over b's in every round where both ran at `conns` (and b's is not zero)."""
    out = []
    for r in rounds:
        ph = phases.get((conns, r), {})
        if a in ph and b in ph and ph[b][key] > 0:
            out.append(ph[a][key] / ph[b][key])
    return out


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def summarize(results_dir: str) -> int:
    root = Path(results_dir)
    phases: dict[tuple[int, int], dict[str, dict]] = {}  # (conns, round) -> server -> row
    for f in sorted(root.iterdir()):
        m = PHASE_RE.match(f.name)
        if not m:
            continue
        rnd, server, conns = int(m.group(1)), m.group(2), int(m.group(3))
        phases.setdefault((conns, rnd), {})[server] = parse_phase(f)
    if not phases:
        print(f"no phase files in {root}", file=sys.stderr)
        return 1

    rounds = sorted({r for _, r in phases})
    streaming = any(row["events"] for ph in phases.values() for row in ph.values())
    conn_levels = sorted({c for c, _ in phases}, reverse=True)
    servers = server_order({s for ph in phases.values() for s in ph})
    summary = {"rounds": len(rounds), "levels": []}
    valid = True

    header = (
        f"{'conns':>5}  {'server':<22} {'req/s':>10} {'p50 ms':>8} {'p99 ms':>8} "
        f"{'CPU ms/req':>10} {'RSS MiB':>8} {'bad':>5} {'errors':>6}"
        + (f" {'events/s':>10} {'ev/stream':>9}" if streaming else "")
    )
    lines = [header, "-" * len(header)]
    md = [
        "| conns | server | req/s | p50 ms | p99 ms | server CPU ms/req | RSS MiB | bad | errors |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for conns in conn_levels:
        level = {"conns": conns, "servers": {}}
        for server in servers:
            rows = [phases[(conns, r)][server] for r in rounds if server in phases.get((conns, r), {})]
            if not rows:
                continue
            agg = {
                "rps": median([r["rps"] for r in rows]),
                "p50_ms": median([r["p50_ms"] for r in rows]),
                "p99_ms": median([r["p99_ms"] for r in rows]),
                "cpu_ms_per_req": median([r["cpu_ms_per_req"] for r in rows]),
                "rss_mib": max((r["rss_mib"] for r in rows if r["rss_mib"] is not None), default=None),
                "bad": sum(r["bad"] for r in rows),
                "errors": sum(r["errors"] for r in rows),
                "verified": all(r["verified"] for r in rows),
                "per_round_rps": [r["rps"] for r in rows],
                "eps": median([r["eps"] for r in rows]),
                "events_per_stream": sum(r["events"] for r in rows) / max(1, sum(r["requests"] for r in rows)),
            }
            if agg["bad"] or agg["errors"] or any(r["requests"] == 0 for r in rows):
                valid = False
            level["servers"][server] = agg
            lines.append(
                f"{conns:>5}  {label(server):<22} {agg['rps']:>10.1f} {agg['p50_ms']:>8.2f} "
                f"{agg['p99_ms']:>8.2f} {fmt(agg['cpu_ms_per_req'], '>10.3f')} "
                f"{fmt(agg['rss_mib'], '>8.1f')} {agg['bad']:>5} {agg['errors']:>6}"
                + (f" {agg['eps']:>10.1f} {agg['events_per_stream']:>9.1f}" if streaming else "")
            )
            md.append(
                f"| {conns} | {label(server)} | {agg['rps']:.1f} | {agg['p50_ms']:.2f} | "
                f"{agg['p99_ms']:.2f} | {fmt(agg['cpu_ms_per_req'], '.3f')} | "
                f"{fmt(agg['rss_mib'], '.1f')} | {agg['bad']} | {agg['errors']} |"
            )
        # Sextant against each peer: the ratio per round (they ran back to back in that
        # round), then the median.
        for peer in PEERS:
            ratios = per_round_ratios(phases, conns, rounds, "sextant", peer, "rps")
            if not ratios:
                continue
            ratio = median(ratios)
            level[f"ratio_sextant_over_{peer}"] = ratio
            level[f"per_round_ratio_sextant_over_{peer}"] = ratios
            name = f"Sextant / {PEER_NAMES[peer]} req/s"
            lines.append(f"{'':>5}  {name:<22} {fmt_ratio(ratio):>9}x")
            md.append(f"| {conns} | **{name}** | **{fmt_ratio(ratio)}x** | | | | | | |")
        # Sextant on each larger journal (or over another binding) against Sextant on the
        # empty one over JSON-RPC, per round.
        for server in servers:
            if not server.startswith("sextant_"):
                continue
            jr = [
                phases[(conns, r)][server]["rps"] / phases[(conns, r)]["sextant"]["rps"]
                for r in rounds
                if {server, "sextant"} <= phases.get((conns, r), {}).keys()
                and phases[(conns, r)]["sextant"]["rps"] > 0
            ]
            if jr:
                level[f"ratio_{server}_over_sextant"] = median(jr)
                if server in BINDING_NAMES:
                    name = f"{BINDING_NAMES[server]} / JSON-RPC req/s"
                    what = "binding"
                else:
                    name = f"{server[len('sextant_'):]} / empty req/s"
                    what = "journal"
                lines.append(f"{'':>5}  {name:<22} {median(jr):>9.3f}x")
                md.append(f"| {conns} | **{what} {name}** | **{median(jr):.3f}x** | | | | | | |")
        # The bare server over gRPC against its JSON-RPC, and Sextant's gRPC against it: what
        # the binding itself costs, and how far Sextant's gRPC is from its limit.
        for a, b, name in (
            ("bare_grpc", "bare", "bare gRPC / bare"),
            ("sextant_grpc", "bare_grpc", "gRPC / bare gRPC"),
        ):
            ratios = per_round_ratios(phases, conns, rounds, a, b, "rps")
            if ratios:
                level[f"ratio_{a}_over_{b}"] = median(ratios)
                lines.append(f"{'':>5}  {name + ' req/s':<22} {median(ratios):>9.3f}x")
                md.append(f"| {conns} | **{name} req/s** | **{median(ratios):.3f}x** | | | | | | |")
        for peer in PEERS if streaming else ():
            eratios = per_round_ratios(phases, conns, rounds, "sextant", peer, "eps")
            if not eratios:
                continue
            ratio = median(eratios)
            level[f"events_ratio_sextant_over_{peer}"] = ratio
            name = f"Sextant / {PEER_NAMES[peer]} ev/s"
            lines.append(f"{'':>5}  {name:<22} {fmt_ratio(ratio):>9}x")
            md.append(f"| {conns} | **{name}** | **{fmt_ratio(ratio)}x** | | | | | | |")
        lines.append("")
        summary["levels"].append(level)

    note = f"{len(rounds)} round(s); values are medians over rounds, ratio = median of per-round ratios."
    if not all(s["verified"] for lv in summary["levels"] for s in lv["servers"].values()):
        note += " Per-response verification was OFF (BENCH_VERIFY=0) for some phases."
    summary["valid"] = valid
    print("\n".join(lines).rstrip())
    print(note)
    if not valid:
        print("INVALID: a phase completed no request, or some responses were errors or not completed tasks (see bad/errors).")
    (root / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    (root / "summary.md").write_text("\n".join(md) + "\n\n" + note + "\n")
    return 0 if valid else 1


def slope(points):
    """Least-squares slope of (x, y) points; None for fewer than two distinct x."""
    if len({x for x, _ in points}) < 2:
        return None
    mx = statistics.fmean(x for x, _ in points)
    my = statistics.fmean(y for _, y in points)
    sxx = sum((x - mx) ** 2 for x, _ in points)
    return sum((x - mx) * (y - my) for x, y in points) / sxx


def soak(results_dir: str) -> int:
    root = Path(results_dir)
    samples: dict[str, list[tuple[float, float, float]]] = {}
    # Anonymous RSS (MiB) and thread count per sample, where the CSV has them.
    split: dict[str, list[tuple[float, float, int]]] = {}
    for line in (root / "soak_rss.csv").read_text().splitlines()[1:]:
        fields = line.split(",")
        t, server, rss, cpu = fields[:4]
        samples.setdefault(server, []).append((float(t), int(rss) / 1024, int(cpu)))
        if len(fields) >= 8 and fields[4] and fields[7]:
            split.setdefault(server, []).append((float(t), int(fields[4]) / 1024, int(fields[7])))
    served: dict[str, dict] = {}
    ok = True
    for f in sorted(root.glob("soak_*.txt")):
        server, kind = f.stem[len("soak_"):].rsplit("_", 1)
        row = parse_phase(f)
        if row["errors"] or row["bad"] or not row["requests"]:
            ok = False
        s = served.setdefault(server, {"requests": 0, "events": 0, "errors": 0, "bad": 0})
        for k in ("requests", "events", "errors", "bad"):
            s[k] += row[k]
        s[kind] = {"requests": row["requests"], "rps": row["rps"], "p99_ms": row["p99_ms"]}
    out = {}
    header = (
        f"{'server':<24} {'requests':>9} {'RSS@1min':>9} {'RSS end':>8} {'RSS max':>8} "
        f"{'MiB/min after 1 min':>19} {'CPU s':>7} {'anon/min':>8} {'threads':>7}"
    )
    lines = [header, "-" * len(header)]
    md = [
        "| server | requests served | RSS at 1 min MiB | RSS at end MiB | RSS max MiB | slope after 1 min MiB/min | CPU s | anonymous RSS slope MiB/min | threads max |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for server in server_order(samples):
        pts = samples[server]
        after = [(t / 60, rss) for t, rss, _ in pts if t >= 60]
        first = after[0][1] if after else None
        sl = slope(after)
        row = {
            "requests": served.get(server, {}).get("requests", 0),
            "rss_mib_at_1min": first,
            "rss_mib_end": pts[-1][1],
            "rss_mib_max": max(r for _, r, _ in pts),
            "slope_mib_per_min": sl,
            "cpu_s": pts[-1][2] / 1000,
            "served": served.get(server, {}),
            "samples": len(pts),
            "anon_slope_mib_per_min": slope([(t / 60, a) for t, a, _ in split.get(server, []) if t >= 60]),
            "threads_max": max((n for _, _, n in split.get(server, [])), default=None),
        }
        out[server] = row
        lines.append(
            f"{label(server):<24} {row['requests']:>9} {fmt(first, '>9.1f')} {row['rss_mib_end']:>8.1f} "
            f"{row['rss_mib_max']:>8.1f} {fmt(sl, '>19.3f')} {row['cpu_s']:>7.0f} "
            f"{fmt(row['anon_slope_mib_per_min'], '>8.3f')} {fmt(row['threads_max'], '>7')}"
        )
        md.append(
            f"| {label(server)} | {row['requests']} | {fmt(first, '.1f')} | {row['rss_mib_end']:.1f} | "
            f"{row['rss_mib_max']:.1f} | {fmt(sl, '.3f')} | {row['cpu_s']:.0f} | "
            f"{fmt(row['anon_slope_mib_per_min'], '.3f')} | {fmt(row['threads_max'], '')} |"
        )
    print("\n".join(lines))
    if not ok:
        print("INVALID: a soak wrk process saw errors or non-completed answers (see soak_*.txt).")
    (root / "soak.json").write_text(json.dumps(out, indent=2) + "\n")
    (root / "soak.md").write_text("\n".join(md) + "\n")
    return 0 if ok else 1


FIRST_RE = re.compile(r"^first_r(\d+)_(\w+?)_c(\d+)\.txt$")


def first(results_dir: str) -> int:
    """run.sh first: per connection level and server, the medians over rounds of streams/s,
    events/s, first-event p50/p90/p99 and whole-stream p50, and the server's CPU per stream."""
    root = Path(results_dir)
    runs: dict[tuple[int, str], list[dict]] = {}
    ok = True
    for f in sorted(root.iterdir()):
        m = FIRST_RE.match(f.name)
        if not m:
            continue
        res, proc = None, None
        for line in f.read_text().splitlines():
            if line.startswith("FIRST_RESULT "):
                res = json.loads(line.split(" ", 1)[1])
            elif line.startswith("PROC "):
                proc = json.loads(line.split(" ", 1)[1])
        if res is None:
            print(f"{f.name}: no FIRST_RESULT line")
            ok = False
            continue
        if res["bad"] or res["errors"]:
            ok = False
        secs = res["duration_us"] / 1e6
        res["sps"] = res["streams"] / secs if secs else 0.0
        res["eps"] = res["events"] / secs if secs else 0.0
        res["cpu_ms_per_stream"] = (proc or {}).get("cpu_ms", 0) / res["streams"] if res["streams"] else 0.0
        runs.setdefault((int(m.group(3)), m.group(2)), []).append(res)
    lines = [
        f"{'conns':>5}  {'server':<26}{'streams/s':>10}{'events/s':>10}{'ev/str':>7}"
        f"{'1st p50':>9}{'1st p90':>9}{'1st p99':>9}{'all p50':>9}{'CPU/str':>9}  bad",
        "(latencies in ms; CPU/str: the server's CPU ms per stream, over the whole phase with its warm-up)",
    ]
    out = {}
    for conns in sorted({c for c, _ in runs}, reverse=True):
        for name in server_order({n for c, n in runs if c == conns}):
            rs = runs[(conns, name)]
            med = lambda k: median([r[k] for r in rs])
            row = {
                "streams_per_s": med("sps"),
                "events_per_s": med("eps"),
                "events_per_stream": med("events") / med("streams") if med("streams") else 0.0,
                "first_p50_ms": med("first_p50_us") / 1000,
                "first_p90_ms": med("first_p90_us") / 1000,
                "first_p99_ms": med("first_p99_us") / 1000,
                "whole_p50_ms": med("whole_p50_us") / 1000,
                "cpu_ms_per_stream": med("cpu_ms_per_stream"),
                "bad": sum(r["bad"] + r["errors"] for r in rs),
                "per_round_eps": [r["eps"] for r in rs],
            }
            out.setdefault(str(conns), {})[name] = row
            lines.append(
                f"{conns:>5}  {label(name):<26}{row['streams_per_s']:>10.0f}{row['events_per_s']:>10.0f}"
                f"{row['events_per_stream']:>7.1f}{row['first_p50_ms']:>9.2f}{row['first_p90_ms']:>9.2f}"
                f"{row['first_p99_ms']:>9.2f}{row['whole_p50_ms']:>9.2f}{row['cpu_ms_per_stream']:>9.3f}"
                f"  {row['bad']}"
            )
    print("\n".join(lines))
    if not ok:
        print("INVALID: a phase saw errors or streams that did not end completed (see first_*.txt).")
    (root / "first.json").write_text(json.dumps(out, indent=2) + "\n")
    return 0 if ok else 1


def main(argv: list[str]) -> int:
    if len(argv) >= 2 and argv[1] == "soak" and len(argv) == 3:
        return soak(argv[2])
    if len(argv) >= 2 and argv[1] == "rpc-url" and len(argv) == 3:
        return rpc_url(argv[2])
    if len(argv) >= 2 and argv[1] == "check" and len(argv) == 4:
        return check(argv[2], argv[3])
    if len(argv) >= 2 and argv[1] == "first" and len(argv) == 3:
        return first(argv[2])
    if len(argv) >= 2 and argv[1] == "summarize" and len(argv) == 3:
        return summarize(argv[2])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
