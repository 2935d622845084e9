"""`python -m benchmarks.selection`: the selection study (issue 22), deterministic from its seeds.

Prints the figures; with `--write` also puts them in docs/selection.md and its plots in docs/selection/.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from benchmarks.selection.route import RouteSetup
from benchmarks.selection.study import plots, report, run_study, write

DOC = Path(__file__).resolve().parents[2] / "docs" / "selection.md"


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.selection", description=__doc__)
    parser.add_argument("--seeds", type=int, default=30, help="runs per rule (seeds 0..N-1); default 30")
    parser.add_argument("--first-seed", type=int, default=0,
                        help="the first seed (a held-out check: e.g. 30 runs seeds 30..59); default 0")
    parser.add_argument("--jobs", type=int, default=2, help="processes to run the seeds in; default 2")
    parser.add_argument("--write", action="store_true", help="update docs/selection.md and its plots")
    args = parser.parse_args()
    if args.write and args.first_seed:
        parser.error("--write keeps the documented seeds 0..N-1; a held-out check only prints")
    started = time.monotonic()
    setup = RouteSetup()
    study = run_study(args.seeds, setup, jobs=args.jobs, first=args.first_seed)
    command = "python -m benchmarks.selection" + (f" --seeds {args.seeds}" if args.seeds != 30 else "")
    command += f" --first-seed {args.first_seed}" if args.first_seed else ""
    figures = report(study, setup, command + ("" if args.first_seed else " --write"))
    print(figures)
    if args.write:
        write(DOC, figures, plots(study, setup))
    print(f"\n({time.monotonic() - started:.0f} s)")


if __name__ == "__main__":
    main()
