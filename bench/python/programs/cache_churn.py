"""A long-lived cache with churn: entries of varied sizes replaced over time."""
import sys
from collections import OrderedDict


def main(rounds, capacity=20000):
    cache = OrderedDict()
    hits = 0
    for i in range(rounds):
        key = (i * 2654435761) % (capacity * 3)
        if key in cache:
            cache.move_to_end(key)
            hits += 1
        else:
            cache[key] = {"key": key, "payload": "x" * (key % 300), "refs": list(range(key % 16))}
            if len(cache) > capacity:
                cache.popitem(last=False)
    return hits


if __name__ == "__main__":
    print(main(int(sys.argv[1]) if len(sys.argv) > 1 else 150000))
