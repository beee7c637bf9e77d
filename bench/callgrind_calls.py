#!/usr/bin/env python3
"""callgrind_calls.py - instructions per call of the calls a function makes.

  callgrind_calls.py PROFILE CALLER [CALLER...]
      prints "CALLER calls=N ir=I per_call=P" for each CALLER

Reads a callgrind profile's call records ("cfn=" / "calls=" / cost line) and
sums, for every call made *from* CALLER, the number of calls and their
inclusive instructions (Ir). The callee's name plays no part, so the count is
the same measurement for every allocator: no debug information, no knowledge
of how the library names its internals, nothing but the caller's symbol (a
noinline function of the harness, present in any unstripped build). The cost
starts at the callee's first instruction (the caller's `call` is not in it) and
includes everything the callee runs: PLT stubs, TLS descriptor resolution and
any slow path the call takes.
"""
import sys


def call_costs(path, callers):
    """{caller: (calls, inclusive Ir)} over every call made from each caller."""
    names = {}  # compressed "(id)" -> name, for fn= and cfn= lines
    totals = {c: [0, 0] for c in callers}
    current = None
    pending = None  # the caller's entry while the next line is a call's cost

    def name_of(spec):
        spec = spec.strip()
        if spec.startswith("("):
            ident, _, rest = spec.partition(")")
            if rest.strip():
                names[ident] = rest.strip()
            return names.get(ident, spec)
        return spec

    positions = 1  # "positions: line" by default; "instr line" with --dump-instr
    with open(path) as f:
        for line in f:
            if pending is not None:
                # The cost line of a call: positions, then events (Ir first).
                fields = line.split()
                pending[1] += int(fields[positions]) if len(fields) > positions else 0
                pending = None
            elif line.startswith("positions:"):
                positions = len(line.split()) - 1
            elif line.startswith("fn="):
                current = name_of(line[3:])
            elif line.startswith("cfn="):
                name_of(line[4:])  # registers the id; the callee does not matter
            elif line.startswith("calls="):
                entry = totals.get(current)
                if entry is not None:
                    entry[0] += int(line[6:].split()[0])
                    pending = entry
    return {c: tuple(v) for c, v in totals.items()}


def main(argv):
    if len(argv) < 3:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    status = 0
    for caller, (calls, ir) in call_costs(argv[1], argv[2:]).items():
        if calls:
            print("%s calls=%d ir=%d per_call=%.1f" % (caller, calls, ir, ir / calls))
        else:
            print("%s calls=0 (the profile has no call from it)" % caller)
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
