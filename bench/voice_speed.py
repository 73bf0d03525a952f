"""What the Voice layer costs a chat turn: the dictionary on a final reply and on every streamed
draft, and the voice part of the system prompt, at three dictionary sizes.

    python bench/voice_speed.py [--rounds 2000]

Pure code (no database, no model): the dictionary and the prompt are computed from the bot row the
chain already has. Baseline in the same run: the same calls with an empty dictionary (what a bot
nobody tuned pays) and, for the draft, the plain join of the pieces the chain did before.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "assistant.settings")

import django

django.setup()

from voice import dictionary, effective  # noqa: E402

REPLY = ("Доставка по Москве — на следующий день, стоимость 300 ₽. При заказе от 5000 ₽ доставка бесплатная. "
         "В другие города отправляем транспортной компанией, срок 2–5 дней. Подробнее: https://shop.example/delivery.")
PIECE = 4  # characters per streamed delta (about one token)


def sized(terms: int, words: int) -> dictionary.Dictionary:
    preferred = (*((f"термин{n}", f"замена {n}") for n in range(terms - 1)), ("доставка", "курьерская доставка"))
    forbidden = tuple(f"запрет{n}*" for n in range(words))
    return dictionary.Dictionary(preferred if terms else (), forbidden)


def per_call_us(call: Callable[[], object], rounds: int) -> tuple[float, float]:
    samples = []
    for _ in range(rounds):
        started = time.perf_counter()
        call()
        samples.append((time.perf_counter() - started) * 1e6)
    samples.sort()
    return statistics.median(samples), samples[int(len(samples) * 0.95)]


def stream(words: dictionary.Dictionary | None) -> None:
    sent: list[str] = []
    for start in range(0, len(REPLY), PIECE):
        sent.append(REPLY[start:start + PIECE])
        text = "".join(sent)
        if words is not None:
            words.draft(text)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=2000)
    args = parser.parse_args()
    sizes = [("empty (baseline)", 0, 0), ("10 terms, 10 words", 10, 10),
             ("100 terms, 300 words (the maximum)", 100, 300)]
    print(f"Reply of {len(REPLY)} characters, streamed in {len(REPLY) // PIECE + 1} deltas; {args.rounds} rounds.\n")
    print("| dictionary | final reply p50 / p95, µs | streamed drafts per answer p50 / p95, µs "
          "| × baseline (final / stream) |")
    print("|---|---|---|---|")
    base_stream = per_call_us(lambda: stream(None), args.rounds // 4)[0]
    rows: list[tuple[str, tuple[float, float], tuple[float, float]]] = []
    for label, terms, words in sizes:
        words_of = sized(terms, words) if terms or words else dictionary.EMPTY
        rows.append((label, per_call_us(partial(words_of.word, REPLY), args.rounds),
                     per_call_us(partial(stream, words_of), args.rounds // 4)))
    base_final, base_drafts = rows[0][1][0], rows[0][2][0]  # the empty dictionary, measured in this run
    for label, final, drafts in rows:
        print(f"| {label} | {final[0]:.1f} / {final[1]:.1f} | {drafts[0]:.0f} / {drafts[1]:.0f} | "
              f"{final[0] / max(base_final, 0.01):.0f} / {drafts[0] / max(base_drafts, 0.01):.0f} |")
    voice = effective.Voice(sliders={"formality": 5, "empathy": 1, "brevity": 5, "assertiveness": 4},
                            conditions="Всегда предлагайте самовывоз.\n" * 10)
    tuned = per_call_us(lambda: voice.prompt("ru"), args.rounds)
    plain = per_call_us(lambda: effective.Voice().prompt("ru"), args.rounds)
    print(f"\nVoice part of the system prompt: {tuned[0]:.1f} µs p50 (untuned bot: {plain[0]:.1f} µs).")
    print(f"Plain join of the deltas (the chain's draft before the Voice layer): {base_stream:.0f} µs per answer.")


if __name__ == "__main__":
    main()
