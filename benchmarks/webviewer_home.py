"""Response times of the viewer's start page (the dashboard), the runs page and the plan
summary the start page loads after it, on the demo's database.

Runs ``awl demo --executor serial`` in a temporary folder (or uses ``--folder``, where it has
run), then sends N requests per page to the viewer's app in this process (starlette's test
client: no network, so the figures are the app's own), as HTML and as JSON, after a few
warm-up requests. Prints p50/p95 in ms, the SQL statements each answer ran (its
``Server-Timing`` header) and the process's CPU time per request. The issue's goal is p95
under 100 ms for every page; the plan summary is loaded after the page, so its time is what a
user waits for that table. ``benchmarks/webviewer.py`` measures all pages over HTTP.

Usage: python benchmarks/webviewer_home.py [--requests 50] [--folder DEMO_FOLDER]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PAGES = [("start page", "/"), ("runs page", "/runs"),
         ("runs page, filtered", "/runs?class=ReducedScienceFrame&status=made&since=2000-01-01"),
         ("plan summary (loaded after the start page)", "/home/plan")]


def demo_folder(folder: str | None) -> Path:
    """A folder where the demo has run: `folder`, or a new one where it runs now."""
    if folder:
        return Path(folder)
    made = Path(tempfile.mkdtemp(prefix="awl-home-bench-"))
    env = {**os.environ, "PYTHONPATH": f"{REPO}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    subprocess.run([sys.executable, "-m", "awlineage.cli", "demo", "--executor", "serial",
                    "--colour", "never"], cwd=made, env=env, check=True,
                   stdout=subprocess.DEVNULL)
    return made


def main() -> None:
    """Measure each page and print one line per page and format."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=50)
    parser.add_argument("--folder", help="a folder where `awl demo` has run")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    from starlette.testclient import TestClient

    from webviewer import create_app

    folder = demo_folder(args.folder)
    app = create_app(f"sqlite:///{folder}/awlineage.db", data_url=str(folder / "awl-data"))
    print(f"load: {os.getloadavg()[0]:.2f} (1 min), {os.cpu_count()} cores")
    with TestClient(app) as client:
        for name, url in PAGES:
            for form, headers in (("HTML", {}), ("JSON", {"accept": "application/json"})):
                for _ in range(3):
                    client.get(url, headers=headers)
                times, statements = [], ""
                cpu = time.process_time()
                for _ in range(args.requests):
                    started = time.perf_counter()
                    answer = client.get(url, headers=headers)
                    times.append(time.perf_counter() - started)
                    assert answer.status_code == 200, (url, answer.text[:300])
                    statements = answer.headers.get("server-timing", "").split('"')[1]
                cpu = (time.process_time() - cpu) / args.requests
                times.sort()
                p50 = times[len(times) // 2] * 1e3
                p95 = times[min(len(times) - 1, int(len(times) * 0.95))] * 1e3
                print(f"{name:45} {form}  p50 {p50:7.1f} ms  p95 {p95:7.1f} ms  "
                      f"cpu {cpu * 1e3:6.1f} ms  {statements}")


if __name__ == "__main__":
    main()
