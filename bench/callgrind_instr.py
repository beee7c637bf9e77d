#!/usr/bin/env python3
"""callgrind_instr.py - per-instruction costs of one function, with its code.

  valgrind --tool=callgrind --dump-instr=yes --instr-atstart=no \\
      --callgrind-out-file=PROFILE EXE KERNEL n=N
  callgrind_instr.py PROFILE OBJECT FUNCTION OPS

Prints every instruction of FUNCTION (as `objdump -d` shows it in OBJECT, the
shared object or executable that defines it) with the instructions it retired
per op (its count divided by OPS), so two allocators' fast paths can be read
side by side. Needs no debug information: addresses and symbols only.
"""
import re
import subprocess
import sys


def instr_costs(path, function):
    """{address: Ir} of FUNCTION's own instructions (callee costs excluded).
    Cost lines start with the positions "instr line", each absolute (0x...),
    relative to the previous line (+N/-N) or the same (*)."""
    names, costs, current, in_call, addr = {}, {}, None, False, 0
    with open(path) as f:
        for line in f:
            if line.startswith("fn=") or line.startswith("cfn="):
                spec = line.split("=", 1)[1].strip()
                m = re.match(r"\((\d+)\)\s*(.*)", spec)
                if m and m.group(2):
                    names[m.group(1)] = m.group(2)
                if line.startswith("fn="):
                    current = names.get(m.group(1)) if m else spec
            elif line.startswith("calls="):
                in_call = True  # the next cost line is the call's inclusive cost
            elif re.match(r"^(0x[0-9a-f]+|[+-]\d+|\*)\s", line):
                fields = line.split()
                pos = fields[0]
                if pos.startswith("0x"):
                    addr = int(pos, 16)
                elif pos != "*":
                    addr += int(pos)
                if current == function and not in_call:
                    costs[addr] = costs.get(addr, 0) + int(fields[2])
                in_call = False
    return costs


def main(argv):
    if len(argv) != 5:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    path, obj, function, ops = argv[1], argv[2], argv[3], float(argv[4])
    costs = instr_costs(path, function)
    dump = subprocess.run(["objdump", "-d", "--no-show-raw-insn", obj], capture_output=True,
                          text=True, check=True).stdout
    # By address: objdump names aliases (free, mi_free) after one of them only.
    addrs = set()
    for nm in (["nm", "--defined-only", obj], ["nm", "-D", "--defined-only", obj]):
        out = subprocess.run(nm, capture_output=True, text=True).stdout
        addrs |= {int(l.split()[0], 16) for l in out.splitlines()
                  if len(l.split()) == 3 and l.split()[2] == function}
    body = None
    for start in addrs:
        body = body or re.search(r"^0*%x <[^>]+>:\n(.*?)(?:\n\n|\Z)" % start, dump, re.S | re.M)
    if not body:
        print("%s: no function %s" % (obj, function), file=sys.stderr)
        return 1
    lines = body.group(1).splitlines()
    base = min(costs) - int(lines[0].split(":")[0], 16) if costs else 0
    total = 0
    for line in lines:
        addr = int(line.split(":")[0], 16)
        cost = costs.get(addr + base, 0)
        total += cost
        print("%8s  %s" % ("%.2f" % (cost / ops) if cost else "", line.strip()))
    print("%8.2f  total per op" % (total / ops))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
