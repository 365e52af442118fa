"""bench/scale.py's campaign and pages stages (issue 18) run end to end on a tiny synthetic KG: every step
reports, the evaluation finishes, and every page answers (no server error; the admin's add pages of derived
rows are refused by design)."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_campaign_and_pages_stages_at_tiny_size(tmp_path):
    env = {**os.environ, "SCALE_TRACEMALLOC": "0", "SCALE_PAGE_REPEATS": "1"}
    env.pop("DATABASE_URL", None)
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "scale.py"), "--triples", "2k", "--workdir", str(tmp_path),
         "--stages", "generate,import,campaign,pages"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    for step in ("sample", "create campaign", "trivial filters", "import labels", "export csv", "export questions"):
        assert re.search(rf"^  {step} +\d+\.\d\d s", out, re.M), step
    assert "evaluation done" in out
    pages = re.findall(r"^ +[\d.]+ ms +(\d{3}) .* (/\S*)", out, re.M)
    assert len(pages) > 60
    statuses = {url: int(status) for status, url in pages}
    assert all(status < 500 for status in statuses.values()), statuses
    refused = {url for url, status in statuses.items() if status == 403}
    assert all(url.startswith("/admin/") and url.endswith("/add/") for url in refused), refused
    for url in ("/admin/pooling/entity/", "/admin/pooling/poolentry/", "/admin/annotation/item/",
                "/campaigns/scale-campaign/manage/order/", "/campaigns/scale-campaign/manage/quality/"):
        assert statuses[url] == 200, url
    assert re.search(r"^pages +\d+ pages in .* slowest \d+ ms \(\d+\) /", out, re.M)
