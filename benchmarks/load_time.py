"""Time two default-model loads in a row: the second reads the converted-weights cache.

Run: .venv/bin/python benchmarks/load_time.py
"""

from __future__ import annotations

import time

from backends.model import load_model


def main() -> None:
    times = []
    for _ in range(2):
        started = time.perf_counter()
        load_model(device="cpu")
        times.append(time.perf_counter() - started)
    print(f"first load {times[0]:.2f}s (converts the GGUF only when the cache is empty)")
    print(f"second load {times[1]:.2f}s (target < 5 s)")


if __name__ == "__main__":
    main()
