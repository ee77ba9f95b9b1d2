/* Time-ordered delivery as TraceEvent's EventCache does it (microsoft/perfview,
 * src/TraceEvent/EventPipe/EventCache.cs, ProcessEventBlock and the sort on sequence points): one queue per
 * capture thread; an IsSorted row first dispatches every queued event older than itself (merged
 * across queues by timestamp) and then itself; sequence points and the end dispatch everything.
 * The merge reproduces TraceEvent's tie order: a binary min-heap built over the active queues in
 * the iteration order of .NET's HashSet (insertion order, freed slots reused last-freed first). */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "reader-internal.h"

typedef struct qev {
    struct qev *next;
    unsigned cls; /* size class (pooled), or NCLASS: allocated for this event alone */
    mantra_trace_event ev;
    uint8_t data[];
} qev;

/* Event slots are pooled by size class (a power of two from 256 bytes to 64 KiB, the event header
 * included), carved from 64 KiB chunks: a slot released after its event is popped waits on its
 * class's free list for the next event of that size, so the queue allocates a chunk only when more
 * events of a class wait at once than ever before, never per event; larger events get a slot of
 * their own. */
#define NCLASS 9
#define CLASS0_SHIFT 8
#define CHUNK_BYTES ((size_t)1 << (CLASS0_SHIFT + NCLASS - 1))

typedef union chunk {
    union chunk *next; /* the chunks of the queue, freed with it */
    max_align_t align; /* the slots after this header are aligned for any member */
} chunk;

typedef struct queue {
    qev *head, *tail;
    size_t count;
} queue;

typedef struct hent {
    int64_t ts;
    size_t q;
} hent;

struct rd_order {
    cm_map qmap;    /* key -> queue index */
    queue *queues;
    size_t nq, capq;
    size_t *slots;  /* active set: queue index + 1, 0 = free slot */
    size_t nslots, capslots;
    size_t *freelist;
    size_t nfree, capfree;
    hent *heap;
    size_t nheap, capheap;
    qev *rhead, *rtail; /* ready to pop */
    qev *current;       /* last popped */
    qev *pool[NCLASS];  /* free slots by size class */
    chunk *chunks;
    uint64_t allocs;    /* chunks and single slots allocated */
};

rd_order *rd_order_new(void) { return calloc(1, sizeof(rd_order)); }

/* Frees the single slots of a list (chunk slots go with their chunks). */
static void free_list(qev *e) {
    while (e) {
        qev *n = e->next;
        if (e->cls >= NCLASS)
            free(e);
        e = n;
    }
}

void rd_order_free(rd_order *o) {
    if (o == NULL)
        return;
    for (size_t i = 0; i < o->nq; i++)
        free_list(o->queues[i].head);
    free_list(o->rhead);
    if (o->current && o->current->cls >= NCLASS) /* its next is stale: not a list */
        free(o->current);
    while (o->chunks) {
        chunk *n = o->chunks->next;
        free(o->chunks);
        o->chunks = n;
    }
    cm_map_free(&o->qmap);
    free(o->queues);
    free(o->slots);
    free(o->freelist);
    free(o->heap);
    free(o);
}

static int grow(void **p, size_t *cap, size_t need, size_t elem) { return cm_grow(p, cap, need, elem, 16); }

/* A slot for n bytes of payload and stack. */
static qev *slot_get(rd_order *o, size_t n) {
    size_t need = sizeof(qev) + n;
    unsigned cls = 0;
    while (cls < NCLASS && need > ((size_t)1 << (CLASS0_SHIFT + cls)))
        cls++;
    if (cls >= NCLASS) {
        qev *e = malloc(need);
        if (e == NULL)
            return NULL;
        o->allocs++;
        e->cls = NCLASS;
        return e;
    }
    if (o->pool[cls] == NULL) { /* a new chunk, cut into slots of this class */
        chunk *c = malloc(sizeof(chunk) + CHUNK_BYTES);
        if (c == NULL)
            return NULL;
        o->allocs++;
        c->next = o->chunks;
        o->chunks = c;
        size_t size = (size_t)1 << (CLASS0_SHIFT + cls);
        for (size_t off = CHUNK_BYTES; off >= size; off -= size) {
            qev *e = (qev *)(void *)((unsigned char *)(c + 1) + off - size);
            e->cls = cls;
            e->next = o->pool[cls];
            o->pool[cls] = e;
        }
    }
    qev *e = o->pool[cls];
    o->pool[cls] = e->next;
    return e;
}

static void slot_put(rd_order *o, qev *e) {
    if (e == NULL)
        return;
    if (e->cls >= NCLASS) {
        free(e);
        return;
    }
    e->next = o->pool[e->cls];
    o->pool[e->cls] = e;
}

static qev *copy_event(rd_order *o, const mantra_trace_event *ev) {
    size_t ssize = ev->stack_count * ev->pointer_size;
    qev *e = slot_get(o, ev->payload_size + ssize);
    if (e == NULL)
        return NULL;
    e->next = NULL;
    e->ev = *ev;
    if (ev->payload_size)
        memcpy(e->data, ev->payload, ev->payload_size);
    if (ssize)
        memcpy(e->data + ev->payload_size, ev->stack, ssize);
    e->ev.payload = e->data;
    e->ev.stack = ssize ? e->data + ev->payload_size : NULL;
    return e;
}

static void ready_push(rd_order *o, qev *e) {
    e->next = NULL;
    if (o->rtail)
        o->rtail->next = e;
    else
        o->rhead = e;
    o->rtail = e;
}

static void slot_remove(rd_order *o, size_t q) {
    for (size_t i = 0; i < o->nslots; i++) {
        if (o->slots[i] == q + 1) {
            o->slots[i] = 0;
            o->freelist[o->nfree++] = i; /* capfree >= nslots always */
            return;
        }
    }
}

static int slot_add(rd_order *o, size_t q) {
    if (o->nfree) {
        o->slots[o->freelist[--o->nfree]] = q + 1;
        return 0;
    }
    if (grow((void **)&o->slots, &o->capslots, o->nslots + 1, sizeof *o->slots) < 0 ||
        grow((void **)&o->freelist, &o->capfree, o->nslots + 1, sizeof *o->freelist) < 0)
        return MANTRA_ENOMEM;
    o->slots[o->nslots++] = q + 1;
    return 0;
}

static void sift_down(rd_order *o, size_t i) {
    for (;;) {
        size_t s = i, l = 2 * i + 1, r = 2 * i + 2;
        if (l < o->nheap && o->heap[l].ts < o->heap[s].ts)
            s = l;
        if (r < o->nheap && o->heap[r].ts < o->heap[s].ts)
            s = r;
        if (s == i)
            return;
        hent t = o->heap[i];
        o->heap[i] = o->heap[s];
        o->heap[s] = t;
        i = s;
    }
}

/* Dispatches queued events with timestamp < stop (all of them when all != 0). */
static int sort_and_dispatch(rd_order *o, int64_t stop, int all) {
    o->nheap = 0;
    for (size_t i = 0; i < o->nslots; i++) {
        if (o->slots[i] == 0)
            continue;
        size_t q = o->slots[i] - 1;
        queue *qu = &o->queues[q];
        if (qu->count && (all || qu->head->ev.timestamp < stop)) {
            if (grow((void **)&o->heap, &o->capheap, o->nheap + 1, sizeof *o->heap) < 0)
                return MANTRA_ENOMEM;
            o->heap[o->nheap].ts = qu->head->ev.timestamp;
            o->heap[o->nheap].q = q;
            o->nheap++;
        }
    }
    if (o->nheap == 0)
        return 0;
    for (size_t i = o->nheap / 2; i-- > 0;)
        sift_down(o, i);
    while (o->nheap) {
        size_t q = o->heap[0].q;
        queue *qu = &o->queues[q];
        qev *e = qu->head;
        qu->head = e->next;
        if (qu->head == NULL)
            qu->tail = NULL;
        qu->count--;
        ready_push(o, e);
        if (qu->count && (all || qu->head->ev.timestamp < stop)) {
            o->heap[0].ts = qu->head->ev.timestamp;
            sift_down(o, 0);
        } else {
            o->heap[0] = o->heap[--o->nheap];
            if (o->nheap)
                sift_down(o, 0);
            if (qu->count == 0)
                slot_remove(o, q);
        }
    }
    return 0;
}

int rd_order_event(rd_order *o, const mantra_trace_event *ev, uint64_t key) {
    qev *e = copy_event(o, ev);
    if (e == NULL)
        return MANTRA_ENOMEM;
    if (ev->is_sorted) {
        int rc = sort_and_dispatch(o, ev->timestamp, 0);
        if (rc < 0) {
            slot_put(o, e);
            return rc;
        }
        ready_push(o, e);
        return 0;
    }
    uint64_t *qi = cm_map_get(&o->qmap, key);
    size_t q;
    if (qi) {
        q = (size_t)*qi;
    } else {
        if (grow((void **)&o->queues, &o->capq, o->nq + 1, sizeof *o->queues) < 0 ||
            cm_map_put(&o->qmap, key, o->nq) < 0) {
            slot_put(o, e);
            return MANTRA_ENOMEM;
        }
        q = o->nq++;
        memset(&o->queues[q], 0, sizeof o->queues[q]);
    }
    queue *qu = &o->queues[q];
    if (qu->count == 0 && slot_add(o, q) < 0) {
        slot_put(o, e);
        return MANTRA_ENOMEM;
    }
    if (qu->tail)
        qu->tail->next = e;
    else
        qu->head = e;
    qu->tail = e;
    qu->count++;
    return 0;
}

int rd_order_flush(rd_order *o) { return sort_and_dispatch(o, INT64_MAX, 1); }

const mantra_trace_event *rd_order_pop(rd_order *o) {
    slot_put(o, o->current);
    o->current = NULL;
    qev *e = o->rhead;
    if (e == NULL)
        return NULL;
    o->rhead = e->next;
    if (o->rhead == NULL)
        o->rtail = NULL;
    o->current = e;
    return &e->ev;
}

uint64_t rd_order_allocations(const rd_order *o) { return o ? o->allocs : 0; }
