"""json.dumps / json.loads of nested documents."""
import json
import sys


def document(seed):
    return {"id": seed, "title": "item %d" % seed, "price": seed * 1.25,
            "tags": ["t%d" % (seed % k) for k in range(1, 9)],
            "children": [{"n": i, "label": "child-%d-%d" % (seed, i)} for i in range(6)]}


def main(rounds):
    total = 0
    for seed in range(rounds):
        text = json.dumps([document(seed + k) for k in range(4)])
        total += len(json.loads(text))
    return total


if __name__ == "__main__":
    print(main(int(sys.argv[1]) if len(sys.argv) > 1 else 2500))
