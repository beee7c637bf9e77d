"""String building: f-strings, %-formatting, str.format, join and split."""
import sys


def main(rounds):
    total = 0
    for i in range(rounds):
        line = f"{i:08d} | {'name' + str(i % 97):<12} | {i * 0.5:10.3f}"
        line += " | %s=%d" % ("key", i) + " | {}:{}".format(i % 13, hex(i))
        fields = line.split(" | ")
        total += len(", ".join(field.strip().upper() for field in fields))
    return total


if __name__ == "__main__":
    print(main(int(sys.argv[1]) if len(sys.argv) > 1 else 50000))
