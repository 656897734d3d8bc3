/*
 * alloc_counter: counts a process's heap allocations, loaded with LD_PRELOAD.
 *
 * It replaces glibc's allocation functions (malloc, calloc, realloc, reallocarray,
 * posix_memalign, aligned_alloc, memalign, valloc, pvalloc, free), counts each call, and
 * hands it to glibc's own allocator through the `__libc_*` entry points glibc exports for
 * exactly this purpose, so nothing else about the process changes. Everything that allocates
 * through the C heap is seen: Rust's `System` allocator, C libraries (a TLS library's
 * malloc), C++'s operator new (libstdc++ calls malloc).
 *
 * The counts live in a file that the measuring process created and names in
 * ALLOC_COUNTER_FILE; it is mapped shared, so the measuring process reads the counts at any
 * moment with a plain read(2) of the file, and a window is two reads. Children forked after
 * start share the mapping (nginx's workers count into their master's file); a child that
 * execs maps the file again through the inherited environment.
 *
 * What counts matches dhat's heap mode: every successful allocation is one block and its
 * requested bytes, realloc of a live block included (one block, the new size); free and
 * realloc to size 0 count nothing. Live and peak bytes are kept from malloc_usable_size (the
 * only size a free knows), so they are slightly above the requested bytes.
 *
 * Nothing here allocates: the counters are atomics, and the constructor uses only getenv,
 * open, mmap and close.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* glibc's allocator, under the names it exports for replacements of malloc to call. */
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);
extern void *__libc_valloc(size_t);
extern void *__libc_pvalloc(size_t);
extern size_t malloc_usable_size(void *);

/* The file's layout, read by alloc-reports (src/subject/process.rs): little-endian u64s. */
struct counts {
    uint64_t magic;        /* COUNTS_MAGIC once the first process mapped the file */
    uint64_t total_blocks; /* successful allocations */
    uint64_t total_bytes;  /* bytes they asked for */
    uint64_t live_bytes;   /* usable bytes live now (wraps below 0 for frees of blocks
                              allocated before the file was mapped) */
    uint64_t max_live_bytes;
    uint64_t frees;
};

#define COUNTS_MAGIC 0x31746e756f636c61ull /* "alcount1" */

/* Counts before the file is mapped (the dynamic loader's and libc's start-up) land here. */
static struct counts early;
static struct counts *counts = &early;

__attribute__((constructor)) static void map_counts(void) {
    const char *path = getenv("ALLOC_COUNTER_FILE");
    if (path == NULL) {
        return;
    }
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        return;
    }
    void *p = mmap(NULL, sizeof(struct counts), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) {
        return;
    }
    counts = p;
    __atomic_store_n(&counts->magic, COUNTS_MAGIC, __ATOMIC_RELEASE);
}

static void note_alloc(void *p, size_t requested) {
    if (p == NULL) {
        return;
    }
    struct counts *c = counts;
    __atomic_fetch_add(&c->total_blocks, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&c->total_bytes, requested, __ATOMIC_RELAXED);
    uint64_t usable = malloc_usable_size(p);
    uint64_t live = __atomic_add_fetch(&c->live_bytes, usable, __ATOMIC_RELAXED);
    uint64_t max = __atomic_load_n(&c->max_live_bytes, __ATOMIC_RELAXED);
    while (live > max && (int64_t)live > 0 &&
           !__atomic_compare_exchange_n(&c->max_live_bytes, &max, live, 1, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED)) {
    }
}

static void note_free(void *p) {
    if (p == NULL) {
        return;
    }
    struct counts *c = counts;
    __atomic_fetch_sub(&c->live_bytes, malloc_usable_size(p), __ATOMIC_RELAXED);
    __atomic_fetch_add(&c->frees, 1, __ATOMIC_RELAXED);
}

void *malloc(size_t n) {
    void *p = __libc_malloc(n);
    note_alloc(p, n);
    return p;
}

void *calloc(size_t n, size_t size) {
    void *p = __libc_calloc(n, size);
    /* __libc_calloc fails on overflow, so the product is exact when p is not NULL. */
    note_alloc(p, n * size);
    return p;
}

void *realloc(void *old, size_t n) {
    if (old == NULL) {
        return malloc(n);
    }
    if (n == 0) {
        free(old);
        return NULL;
    }
    size_t old_usable = malloc_usable_size(old);
    void *p = __libc_realloc(old, n);
    if (p != NULL) {
        __atomic_fetch_sub(&counts->live_bytes, old_usable, __ATOMIC_RELAXED);
        note_alloc(p, n);
    }
    return p;
}

void *reallocarray(void *old, size_t n, size_t size) {
    size_t bytes;
    if (__builtin_mul_overflow(n, size, &bytes)) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc(old, bytes);
}

void free(void *p) {
    note_free(p);
    __libc_free(p);
}

void *memalign(size_t align, size_t n) {
    void *p = __libc_memalign(align, n);
    note_alloc(p, n);
    return p;
}

void *aligned_alloc(size_t align, size_t n) {
    return memalign(align, n);
}

int posix_memalign(void **out, size_t align, size_t n) {
    if (align < sizeof(void *) || (align & (align - 1)) != 0) {
        return EINVAL;
    }
    void *p = __libc_memalign(align, n);
    if (p == NULL) {
        return ENOMEM;
    }
    note_alloc(p, n);
    *out = p;
    return 0;
}

void *valloc(size_t n) {
    void *p = __libc_valloc(n);
    note_alloc(p, n);
    return p;
}

void *pvalloc(size_t n) {
    void *p = __libc_pvalloc(n);
    note_alloc(p, n);
    return p;
}
