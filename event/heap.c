/*
 * heap.c: the timer min-heap: an array of node pointers in heap order,
 * each node knowing its slot so that removal and re-keying of any node
 * are O(log n). See heap.h for the invariants.
 */
#include "core.h"
#include "heap.h"

#define RX_HEAP_MIN_CAP  16

static void
place(rx_heap_t *heap, rx_uint_t i, rx_heap_node_t *node)
{
    heap->nodes[i] = node;
    node->index = i;
}

/* Moves the node at i towards the root while its parent is larger; a
 * hole is carried instead of swapping at every level. */
static void
sift_up(rx_heap_t *heap, rx_uint_t i)
{
    rx_heap_node_t *node = heap->nodes[i];

    while (i > 0) {
        rx_uint_t parent = (i - 1) / 2;

        if (heap->nodes[parent]->key <= node->key) {
            break;
        }
        place(heap, i, heap->nodes[parent]);
        i = parent;
    }
    place(heap, i, node);
}

static void
sift_down(rx_heap_t *heap, rx_uint_t i)
{
    rx_heap_node_t *node = heap->nodes[i];

    for ( ;; ) {
        rx_uint_t child = 2 * i + 1;

        if (child >= heap->n) {
            break;
        }
        if (child + 1 < heap->n
            && heap->nodes[child + 1]->key < heap->nodes[child]->key)
        {
            child++;
        }
        if (node->key <= heap->nodes[child]->key) {
            break;
        }
        place(heap, i, heap->nodes[child]);
        i = child;
    }
    place(heap, i, node);
}

/* After the key of the node at i changed, or another node took slot i. */
static void
restore(rx_heap_t *heap, rx_uint_t i)
{
    if (i > 0 && heap->nodes[i]->key < heap->nodes[(i - 1) / 2]->key) {
        sift_up(heap, i);
    } else {
        sift_down(heap, i);
    }
}

static rx_int_t
grow(rx_heap_t *heap)
{
    rx_heap_node_t  **nodes;
    rx_uint_t         cap;

    cap = heap->cap ? heap->cap * 2 : RX_HEAP_MIN_CAP;
    if (cap < heap->cap || cap > SIZE_MAX / sizeof(*nodes)) {
        return RX_ERROR;
    }
    nodes = realloc(heap->nodes, cap * sizeof(*nodes));
    if (nodes == NULL) {
        return RX_ERROR;
    }
    heap->nodes = nodes;
    heap->cap = cap;
    return RX_OK;
}

rx_int_t
rx_heap_init(rx_heap_t *heap, rx_uint_t capacity)
{
    heap->nodes = NULL;
    heap->n = 0;
    heap->cap = 0;

    if (capacity == 0) {
        return RX_OK;
    }
    if (capacity > SIZE_MAX / sizeof(*heap->nodes)) {
        return RX_ERROR;
    }
    heap->nodes = malloc(capacity * sizeof(*heap->nodes));
    if (heap->nodes == NULL) {
        return RX_ERROR;
    }
    heap->cap = capacity;
    return RX_OK;
}

void
rx_heap_free(rx_heap_t *heap)
{
    free(heap->nodes);
    heap->nodes = NULL;
    heap->n = 0;
    heap->cap = 0;
}

rx_int_t
rx_heap_insert(rx_heap_t *heap, rx_heap_node_t *node)
{
    if (heap->n == heap->cap && grow(heap) != RX_OK) {
        return RX_ERROR;
    }
    place(heap, heap->n, node);
    heap->n++;
    sift_up(heap, node->index);
    return RX_OK;
}

void
rx_heap_remove(rx_heap_t *heap, rx_heap_node_t *node)
{
    rx_uint_t        i = node->index;
    rx_heap_node_t  *last;

    if (i == RX_HEAP_NONE) {
        return;
    }
    node->index = RX_HEAP_NONE;

    /* the last node fills the hole, then goes up or down from there */
    last = heap->nodes[--heap->n];
    if (last != node) {
        place(heap, i, last);
        restore(heap, i);
    }
}

rx_int_t
rx_heap_update(rx_heap_t *heap, rx_heap_node_t *node, rx_msec_t key)
{
    node->key = key;
    if (node->index == RX_HEAP_NONE) {
        return rx_heap_insert(heap, node);
    }
    restore(heap, node->index);
    return RX_OK;
}

rx_heap_node_t *
rx_heap_pop_min(rx_heap_t *heap)
{
    rx_heap_node_t *min = rx_heap_min(heap);

    if (min) {
        rx_heap_remove(heap, min);
    }
    return min;
}

bool
rx_heap_verify(const rx_heap_t *heap)
{
    rx_uint_t i;

    if (heap->n > heap->cap || (heap->cap && heap->nodes == NULL)) {
        return false;
    }
    for (i = 0; i < heap->n; i++) {
        if (heap->nodes[i] == NULL || heap->nodes[i]->index != i) {
            return false;
        }
        if (i > 0 && heap->nodes[(i - 1) / 2]->key > heap->nodes[i]->key) {
            return false;
        }
    }
    return true;
}
