"""Allocation-heavy Python workload: dicts, tuples, strings, sorting, json.

Usage: PYTHONMALLOC=malloc PYTHONHASHSEED=0 python3 alloc.py N. Prints a digest.
"""
import hashlib
import json
import sys

n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
digest = hashlib.sha256()
records = [{"id": i, "name": "item%05d" % ((i * 7919) % n), "tags": [str(i % k) for k in (3, 5, 7)]}
           for i in range(n)]
for round_ in range(6):
    index = {}
    for r in records:
        key = (r["name"][:6], len(r["tags"][round_ % 3]))
        index.setdefault(key, []).append((r["id"], r["name"].upper() + "-" + str(round_)))
    for key in sorted(index):
        bucket = sorted(index[key], reverse=True)
        digest.update(repr(bucket[:8]).encode())
    text = json.dumps(records[: n // 4], sort_keys=True)
    records = json.loads(text) + records[n // 4:]
    digest.update(str(len(text)).encode())
    records = [dict(r, round=round_) for r in records]
print(n, digest.hexdigest())
