print("scrolloff-bench: no benchmarks yet")
