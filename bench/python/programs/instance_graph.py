"""A graph of class instances built, walked and dropped (cycles: the GC frees it)."""
import sys


class Node:
    def __init__(self, key, parent):
        self.key = key
        self.parent = parent
        self.children = []
        self.attributes = {"depth": parent.attributes["depth"] + 1 if parent else 0}


def build(size):
    root = Node(0, None)
    nodes = [root]
    for key in range(1, size):
        parent = nodes[(key * 7919) % len(nodes)]
        node = Node(key, parent)
        parent.children.append(node)
        nodes.append(node)
    return root, nodes


def main(rounds):
    depth = 0
    for _ in range(rounds):
        root, nodes = build(20000)
        depth += max(node.attributes["depth"] for node in nodes)
        del root, nodes
    return depth


if __name__ == "__main__":
    print(main(int(sys.argv[1]) if len(sys.argv) > 1 else 5))
