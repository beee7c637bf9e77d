"""Short-lived dicts, lists, tuples and strings, as request handling makes them."""
import sys


def handle(request_id):
    record = {"id": request_id, "name": f"user{request_id}", "tags": [str(request_id % 7)] * 3}
    record["pair"] = (record["name"], len(record["tags"]))
    rows = [dict(record, seq=i) for i in range(8)]
    return sum(len(row["name"]) for row in rows)


def main(rounds):
    return sum(handle(i) for i in range(rounds))


if __name__ == "__main__":
    print(main(int(sys.argv[1]) if len(sys.argv) > 1 else 30000))
