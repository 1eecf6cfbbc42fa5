"""Time of reporting every syntax error of a file (parser.parse_recovering): the parse resumes after each
error by re-parsing the text with the statement in error blanked, at most MAX_SYNTAX_ERRORS times.

    python benchmarks/recovery.py [--rounds R]

For a library scenario, and for copies of it with 1, 5 and 20 broken statements, and for a large file
(the scenario's topology repeated to ~200 KB) with 20: prints the median milliseconds of parsing the
clean file, of parsing the broken one with recovery, the errors reported and the ratio of the two.
Nothing is asserted: this prints figures.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from itbench_dsl.diagnostics import Diagnostics  # noqa: E402
from itbench_dsl.parser import MAX_SYNTAX_ERRORS, decode, parse_recovering  # noqa: E402

SCENARIO = ROOT / "scenarios" / "sre" / "shop-cart-modified-env.itb"


def broken(text: str, count: int) -> str:
    """`count` object lines of the topology given a doubled `=` (each a statement in error)."""
    lines = text.splitlines(keepends=True)
    done = 0
    for index, line in enumerate(lines):
        if done < count and " = " in line and not line.lstrip().startswith("#"):
            lines[index] = line.replace(" = ", " = = ", 1)
            done += 1
    return "".join(lines)


def large(text: str, size: int) -> str:
    start = text.index("  topology {")
    end = text.index("\n  }\n", start) + 5
    body = text[start:end]
    copies = [body.replace('"', '"c%d-' % i).replace('"c%d-shop"' % i, '"shop"') for i in range(size // len(body) + 1)]
    return text[:start] + "".join(copies) + text[end:]


def timed(text: str, rounds: int) -> tuple[float, int]:
    times, errors = [], 0
    for _ in range(rounds):
        diags = Diagnostics()
        start = time.perf_counter()
        source = decode(text.encode(), "bench.itb", diags)
        parse_recovering(source, diags)
        times.append((time.perf_counter() - start) * 1000)
        errors = len(diags.errors())
    return statistics.median(times), errors


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    rounds = parser.parse_args().rounds
    text = SCENARIO.read_text()
    timed(text, 1)  # the parser's tables
    print(f"MAX_SYNTAX_ERRORS = {MAX_SYNTAX_ERRORS}")
    print(f"{'input':<40} {'bytes':>8} {'clean ms':>9} {'broken ms':>10} {'errors':>7} {'ratio':>6}")
    for name, clean, count in [(SCENARIO.name, text, 1), (SCENARIO.name, text, 5), (SCENARIO.name, text, 20),
                               ("large (topology repeated)", large(text, 200_000), 20)]:
        base, _ = timed(clean, rounds)
        slow, errors = timed(broken(clean, count), rounds)
        print(f"{name + f' +{count} broken':<40} {len(clean):>8} {base:>9.1f} {slow:>10.1f} {errors:>7} {slow / base:>6.1f}")


if __name__ == "__main__":
    main()
