"""Run every benchmark module in this package and print its figures."""

import importlib
import pkgutil
from pathlib import Path


def main() -> None:
    for info in sorted(pkgutil.iter_modules([str(Path(__file__).parent)]), key=lambda m: m.name):
        if info.name.startswith("bench_"):
            module = importlib.import_module(f"bench.{info.name}")
            print(f"== {info.name}")
            module.main()


if __name__ == "__main__":
    main()
