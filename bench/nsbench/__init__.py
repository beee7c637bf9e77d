"""nsbench - the nsalloc benchmark runner behind bench/run.py.

workloads  what is measured (kernels, sizes, programs, peers, targets)
arms       which executable and environment runs each allocator
measure    one run: /usr/bin/time or callgrind, result parsing, parity
sections   the kernel sections (callgrind, interleaved wall clock, memory)
programs   whole programs under LD_PRELOAD
multicopy  K private copies in one process
teststress mimalloc's test-stress, compiled from the prebuilt peers
tables     formatting and the per-section tables with their ratios
targets    issue 22's targets, met or not, computed from a run
report_parts  the report's module arm, 10x, test-stress and idle parts
chart      the SVG chart (gnuplot)
document   docs/benchmarks.md
cli        the command line
"""
