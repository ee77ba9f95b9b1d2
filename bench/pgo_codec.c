/* pgo_codec - throughput of the PGO data library's formats (mantra/pgo.h), the pieces of a session
 * flush and of the `mantra pgo` converter: for M methods with block-count schemas (1..8
 * BasicBlockIntCount records, random counts from a fixed seed; the mix of the interpreter's mode 1
 * and mode 2), the time to
 *   snapshot  read every method's counters (mantra_pgo_snapshot over the store, M methods)
 *   encode    encode every method (mantra_pgo_encode) and cut it into chunks
 *   reasm     reassemble the chunks (mantra_pgo_reassembler) as a converter does
 *   decode    decode every method (mantra_pgo_decode)
 *   text      write the CLR text format of every method (to memory)
 *   parse     parse that text back (mantra_pgo_text_parse)
 * Figures: ms per pass (median, min, max over -r repetitions, interleaved), methods/s and MB/s of
 * the encoded bytes (text: of the text).
 *
 * Usage: pgo_codec [-m METHODS] [-r REPS]   (defaults -m 100000 -r 5). Figures only: exit 0.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dotnet_defs.h" /* MANTRA_PGO_<Name>: the PGO kinds of manifest/dotnet.yaml */
#include "mantra/pgo.h"
#include "platform/platform-internal.h"

#define MAX_REPS 31
enum { P_SNAPSHOT, P_ENCODE, P_REASM, P_DECODE, P_TEXT, P_PARSE, P_COUNT };
static const char *k_names[P_COUNT] = {"snapshot", "encode", "reasm", "decode", "text", "parse"};

static uint64_t g_rng = 0x243F6A8885A308D3u;
static uint64_t rnd(void) {
    g_rng ^= g_rng >> 12;
    g_rng ^= g_rng << 25;
    g_rng ^= g_rng >> 27;
    return g_rng * 0x2545F4914F6CDD1Du;
}

static const mantra_pgo_method **g_methods;
static size_t g_count;
static uint8_t **g_blobs;
static size_t *g_sizes;
static uint64_t g_bytes, g_text_bytes;
static mantra_pgo_text_buffer g_text;
static volatile uint64_t g_sink;

static void die(const char *what) {
    fprintf(stderr, "pgo_codec: %s\n", what);
    exit(2);
}

static void pass(int p) {
    switch (p) {
    case P_SNAPSHOT:
        for (size_t i = 0; i < g_count; i++) {
            mantra_pgo_data d;
            if (mantra_pgo_snapshot(g_methods[i], 0, &d) != MANTRA_OK)
                die("snapshot");
            g_sink += (uint64_t)d.values[0];
            mantra_pgo_data_free(&d);
        }
        break;
    case P_ENCODE:
        g_bytes = 0;
        for (size_t i = 0; i < g_count; i++) {
            mantra_pgo_data d;
            if (mantra_pgo_snapshot(g_methods[i], 0, &d) != MANTRA_OK)
                die("snapshot");
            uint8_t out[512];
            int64_t n = mantra_pgo_encode(d.schema, d.records, d.values, d.value_count, out, sizeof out);
            if (n <= 0 || n > (int64_t)sizeof out)
                die("encode");
            size_t chunks = mantra_pgo_chunk_count((size_t)n);
            for (size_t c = 0; c < chunks; c++) {
                uint32_t flags;
                size_t off, len;
                (void)mantra_pgo_chunk((size_t)n, c, &flags, &off, &len);
                g_sink += flags + off + len;
            }
            memcpy(g_blobs[i], out, (size_t)n);
            g_sizes[i] = (size_t)n;
            g_bytes += (uint64_t)n;
            mantra_pgo_data_free(&d);
        }
        break;
    case P_REASM: {
        mantra_pgo_reassembler *r = mantra_pgo_reassembler_new();
        for (size_t i = 0; i < g_count; i++)
            if (mantra_pgo_reassembler_add(r, (uint64_t)i + 1, MANTRA_PGO_CHUNK_FINAL, g_blobs[i], g_sizes[i]) != 1)
                die("reassembly");
        if (mantra_pgo_reassembler_finish(r) != g_count)
            die("reassembly count");
        mantra_pgo_reassembler_free(r);
        break;
    }
    case P_DECODE:
        for (size_t i = 0; i < g_count; i++) {
            mantra_pgo_data d;
            if (mantra_pgo_decode(g_blobs[i], g_sizes[i], 8, &d, NULL) != MANTRA_OK)
                die("decode");
            g_sink += d.value_count;
            mantra_pgo_data_free(&d);
        }
        break;
    case P_TEXT:
        g_text.size = 0;
        if (mantra_pgo_text_write_start(mantra_pgo_text_buffer_write, &g_text, (uint32_t)g_count) != 0)
            die("text");
        for (size_t i = 0; i < g_count; i++) {
            mantra_pgo_data d;
            if (mantra_pgo_snapshot(g_methods[i], 0, &d) != MANTRA_OK)
                die("snapshot");
            mantra_pgo_method_info info;
            mantra_pgo_method_describe(g_methods[i], &info);
            mantra_pgo_text_method m = {(uint32_t)i, info.token, info.il_size, info.name_space, info.name,
                                        info.signature, d.schema, d.records, d.values, d.value_count, NULL, NULL};
            if (mantra_pgo_text_write_method(mantra_pgo_text_buffer_write, &g_text, &m) != 0)
                die("text method");
            mantra_pgo_data_free(&d);
        }
        if (mantra_pgo_text_write_end(mantra_pgo_text_buffer_write, &g_text) != 0)
            die("text end");
        g_text_bytes = g_text.size;
        break;
    default: {
        mantra_pgo_text *t = NULL;
        if (mantra_pgo_text_parse(g_text.data, g_text.size, "bench", &t) != MANTRA_OK ||
            mantra_pgo_text_method_count(t) != g_count)
            die("parse");
        mantra_pgo_text_free(t);
        break;
    }
    }
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    size_t m = 100000;
    int reps = 5;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-m") == 0 && i + 1 < argc)
            m = (size_t)strtod(argv[++i], NULL);
        else if (strcmp(argv[i], "-r") == 0 && i + 1 < argc)
            reps = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: pgo_codec [-m METHODS] [-r REPS]\n");
            return 2;
        }
    }
    if (m == 0 || reps < 1 || reps > MAX_REPS)
        die("-m > 0, -r 1..31");
    mantra_guid g = {0x6d616e74, 0x7261, 0x7067, {'o', 'c', 'o', 'd', 'e', 'c', 0, 1}};
    mantra_pgo_module *mod;
    if (mantra_pgo_module_register("bench", "/bench/app.mbc", &g, &mod) != MANTRA_OK)
        die("module");
    g_methods = calloc(m, sizeof *g_methods);
    g_blobs = calloc(m, sizeof *g_blobs);
    g_sizes = calloc(m, sizeof *g_sizes);
    if (g_methods == NULL || g_blobs == NULL || g_sizes == NULL)
        die("out of memory");
    size_t records_total = 0;
    for (size_t i = 0; i < m; i++) {
        char name[32];
        snprintf(name, sizeof name, "M%zu", i);
        mantra_pgo_method *meth;
        if (mantra_pgo_method_register(mod, 0x06000001 + (uint32_t)i, "Bench.Program", name, "int64 (int64)", 200,
                                       &meth) != MANTRA_OK)
            die("method");
        mantra_pgo_schema s[8];
        size_t n = 1 + rnd() % 8;
        int32_t il = 0;
        for (size_t k = 0; k < n; k++) {
            s[k] = (mantra_pgo_schema){MANTRA_PGO_BasicBlockIntCount, il, 1, 0};
            il += 1 + (int32_t)(rnd() % 40);
        }
        if (mantra_pgo_method_instrument(meth, s, n) != MANTRA_OK)
            die("instrument");
        for (size_t k = 0; k < n; k++) {
            uint64_t r = rnd();
            *mantra_pgo_counters_u32(meth, k) = (uint32_t)(r % 4 == 0 ? r >> 32 : r % 1000);
        }
        g_methods[i] = meth;
        g_blobs[i] = malloc(512);
        if (g_blobs[i] == NULL)
            die("out of memory");
        records_total += n;
    }
    g_count = m;
    printf("pgo_codec: %zu methods, %zu BasicBlockIntCount records, %d repetitions\n", m, records_total, reps);
    static double ms[P_COUNT][MAX_REPS];
    for (int p = 0; p < P_COUNT; p++) /* warm-up, and the inputs of the later passes */
        pass(p);
    for (int r = 0; r < reps; r++)
        for (int p = 0; p < P_COUNT; p++) {
            uint64_t t0 = mantra_pal_now_ns();
            pass(p);
            ms[p][r] = (double)(mantra_pal_now_ns() - t0) / 1e6;
        }
    printf("encoded %" PRIu64 " bytes (%.1f per method), text %" PRIu64 " bytes\n", g_bytes, (double)g_bytes / (double)m,
           g_text_bytes);
    printf("  %-9s %9s %9s %9s %14s %9s\n", "pass", "median ms", "min", "max", "methods/s", "MB/s");
    for (int p = 0; p < P_COUNT; p++) {
        double s[MAX_REPS];
        memcpy(s, ms[p], (size_t)reps * sizeof *s);
        qsort(s, (size_t)reps, sizeof *s, cmp);
        double med = s[reps / 2];
        double mb = (double)(p >= P_TEXT ? g_text_bytes : g_bytes) / 1e6;
        printf("  %-9s %9.2f %9.2f %9.2f %14.0f %9.1f\n", k_names[p], med, s[0], s[reps - 1], (double)m / (med / 1e3),
               mb / (med / 1e3));
        printf("summary: pgo_codec %-8s %zu methods: %.2f ms (min %.2f, max %.2f), %.1f MB/s\n", k_names[p], m, med,
               s[0], s[reps - 1], mb / (med / 1e3));
    }
    return 0;
}
