"""`make bench`: every benchmark in turn, each printing its own Markdown table with its baseline.

Order matters: retrieval_quality crawls and embeds the data sets (and fills the embedding cache)
that search_speed builds its synthetic 100k entries from; chain_speed reuses search_speed's helpers.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCRIPTS = [
    "retrieval_quality.py", "embedding_speed.py", "crawl_speed.py", "search_speed.py", "chain_speed.py",
    "ws_capacity.py", "operator_latency.py", "assignment.py", "inbox_page.py", "inbox_phone_paint.py",
    "copilot_speed.py", "faults.py", "load.py",
    "route_overhead.py", "order_lookup.py", "catalog_import.py", "api_speed.py", "voice_speed.py",
    "dashboard_pages.py", "db_pool.py", "messengers.py",
]


def main() -> int:
    for script in SCRIPTS:
        print(f"\n<!-- bench/{script} -->", flush=True)
        code = subprocess.call([sys.executable, str(HERE / script), *sys.argv[1:]])
        if code:
            return code
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
