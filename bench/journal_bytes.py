#!/usr/bin/env python3
"""Where a journal's bytes go, per task: each table's and index's pages (SQLite's dbstat,
which Python's sqlite3 has built in), and the events' body sizes by kind.

    python3 bench/journal_bytes.py DATA_DIR/journal.db

Read-only; safe beside a running Sextant (WAL). Counts only what is checkpointed into the
main file plus what the WAL holds for readers, like any reader sees it.
"""

import sqlite3
import sys


def main(path: str) -> None:
    c = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    tasks = c.execute("SELECT COUNT(*) FROM tasks").fetchone()[0]
    if tasks == 0:
        sys.exit(f"{path}: no tasks")
    page_size = c.execute("PRAGMA page_size").fetchone()[0]
    pages = c.execute("PRAGMA page_count").fetchone()[0]
    free = c.execute("PRAGMA freelist_count").fetchone()[0]
    total = page_size * pages
    print(f"{path}: {tasks} tasks, {total} bytes, {total / tasks:.0f} bytes/task "
          f"({free} free pages)")
    print(f"{'table or index':40} {'bytes':>12} {'per task':>9} {'payload/task':>13} {'share':>6}")
    rows = c.execute(
        "SELECT name, SUM(pgsize), SUM(payload) FROM dbstat GROUP BY name ORDER BY 2 DESC"
    ).fetchall()
    small = [name for name, _, payload in rows if payload / tasks < 1]
    for name, size, payload in rows:
        if payload / tasks >= 1:
            print(f"{name:40} {size:12} {size / tasks:9.0f} {payload / tasks:13.0f} "
                  f"{100 * size / total:5.1f}%")
    print(f"(and {len(small)} tables and indexes under 1 byte of payload per task)")
    print()
    print(f"{'event kind':24} {'per task':>9} {'avg body bytes':>15}")
    for kind, n, avg in c.execute(
        "SELECT kind, COUNT(*), AVG(LENGTH(body)) FROM events GROUP BY kind ORDER BY 2 DESC"
    ):
        print(f"{kind:24} {n / tasks:9.2f} {avg:15.0f}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
