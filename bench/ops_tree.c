/*
 * ops_tree.c - per-operation scan: a tree built and torn down, the shape of a
 * parser's or an interpreter's object graph. Each round inserts TREE_NODES
 * nodes of 33-64 bytes with random keys into an unbalanced binary search tree,
 * then frees it in post-order (children before their parent, so frees come in
 * an order unrelated to the allocations). One op = one node allocated and
 * freed.
 */
#include "kernels.h"

#define TREE_NODES 4096

typedef struct tree_node_s {
  struct tree_node_s *child[2];
  uint64_t key;
  uint64_t size; /* the node's allocated size: its last byte holds a stamp */
} tree_node_t;

static void tree_insert(tree_node_t **root, tree_node_t *node) {
  while (*root)
    root = &(*root)->child[node->key > (*root)->key];
  *root = node;
}

/* Post-order teardown; the depth of a random binary search tree of 4096
 * nodes stays within a few dozen levels, so recursion is bounded. */
static uint64_t tree_free(const bench_alloc_t *a, tree_node_t *node) {
  if (!node) return 0;
  uint64_t sum = tree_free(a, node->child[0]) + tree_free(a, node->child[1]);
  if (((volatile uint8_t *)node)[node->size - 1] != (uint8_t)node->key)
    bench_fail("tree node %p lost its contents", (void *)node);
  sum += bench_mix(node->key);
  a->free(node);
  return sum;
}

static uint64_t tree_round(const bench_alloc_t *a, uint64_t *rng) {
  tree_node_t *root = NULL;
  for (size_t i = 0; i < TREE_NODES; i++) {
    uint64_t r = bench_rand(rng);
    size_t size = sizeof(tree_node_t) + 1 + (size_t)(r % 32); /* the stamp is past the fields */
    tree_node_t *node = bench_check(a->malloc(size), size);
    *node = (tree_node_t){{NULL, NULL}, r >> 8, size};
    ((volatile uint8_t *)node)[size - 1] = (uint8_t)node->key;
    tree_insert(&root, node);
  }
  return tree_free(a, root);
}

BENCH_KERNEL(op_tree) {
  uint64_t rng = p->seed, sum = tree_round(a, &rng); /* warm-up */
  uint64_t rounds = (p->n + TREE_NODES - 1) / TREE_NODES;
  bench_region_begin();
  for (uint64_t i = 0; i < rounds; i++)
    sum += tree_round(a, &rng);
  bench_region_end();
  return (bench_result_t){rounds * TREE_NODES, sum};
}
