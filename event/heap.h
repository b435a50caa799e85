/*
 * heap.h: the binary min-heap of timer deadlines, one per worker. Nodes
 * are embedded in their owners (a connection, an upstream peer) and found
 * back with rx_heap_data(); the heap stores pointers to them and keeps
 * each node's position in node->index so any node leaves in O(log n).
 */
#ifndef RX_HEAP_H
#define RX_HEAP_H

#include "core.h"

/* node->index of a node that is in no heap. */
#define RX_HEAP_NONE  ((rx_uint_t) -1)

typedef struct {
    rx_msec_t  key;     /* the deadline; smallest first, ties in any order */
    rx_uint_t  index;   /* slot in the heap's array, RX_HEAP_NONE if none;
                           the heap's to write */
} rx_heap_node_t;

/*
 * Invariants: nodes[0..n) are the queued nodes, nodes[i]->index == i, and
 * nodes[(i - 1) / 2]->key <= nodes[i]->key for every i > 0.
 */
typedef struct {
    rx_heap_node_t  **nodes;
    rx_uint_t         n;      /* queued nodes */
    rx_uint_t         cap;    /* slots allocated in nodes */
} rx_heap_t;

/* The owner of a node: rx_heap_data(node, rx_conn_t, timer). */
#define rx_heap_data(node, type, member)                                      \
    ((type *) ((char *) (node) - offsetof(type, member)))

/* Marks a node as queued nowhere; do this before its first use. */
static inline void
rx_heap_node_init(rx_heap_node_t *node)
{
    node->index = RX_HEAP_NONE;
}

static inline bool
rx_heap_is_queued(const rx_heap_node_t *node)
{
    return node->index != RX_HEAP_NONE;
}

static inline rx_uint_t
rx_heap_count(const rx_heap_t *heap)
{
    return heap->n;
}

/* The node with the smallest key, or NULL when the heap is empty. */
static inline rx_heap_node_t *
rx_heap_min(const rx_heap_t *heap)
{
    return heap->n ? heap->nodes[0] : NULL;
}

/*
 * Prepares an empty heap with room for `capacity` nodes (the worker knows
 * worker_connections; 0 allocates on first insert). The heap still grows
 * past it. Returns RX_OK, or RX_ERROR when memory is exhausted.
 */
rx_int_t rx_heap_init(rx_heap_t *heap, rx_uint_t capacity);

/* Frees the array; queued nodes are left marked as queued. */
void rx_heap_free(rx_heap_t *heap);

/*
 * Queues `node` with its current key. The node must not be queued.
 * Returns RX_OK, or RX_ERROR when the array could not grow (the node is
 * then not queued). O(log n), amortised over growth.
 */
rx_int_t rx_heap_insert(rx_heap_t *heap, rx_heap_node_t *node);

/* Takes `node` out of the heap; a node not queued is left alone. O(log n). */
void rx_heap_remove(rx_heap_t *heap, rx_heap_node_t *node);

/*
 * Sets the node's key to `key` and restores the order: a queued node moves
 * up or down (the common "push the deadline back" never allocates), a node
 * not queued is inserted. Returns RX_OK, or RX_ERROR only from an insert.
 */
rx_int_t rx_heap_update(rx_heap_t *heap, rx_heap_node_t *node, rx_msec_t key);

/* Removes and returns the node with the smallest key, NULL when empty. */
rx_heap_node_t *rx_heap_pop_min(rx_heap_t *heap);

/* Checks the invariants above in O(n); for tests and debug builds. */
bool rx_heap_verify(const rx_heap_t *heap);

#endif /* RX_HEAP_H */
