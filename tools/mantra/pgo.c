/* mantra pgo - traces -> PGO profile (docs/cli.md "mantra pgo"): the JitInstrumentationData events
 * of one or more traces, reassembled, decoded, merged and written in the CLR's text format
 * (DOTNET_WritePGOData) or as JSON; --check reads a text profile back, --top prints the hottest
 * methods. The work is in pgo_collect.c, pgo_profile.c and pgo_write.c. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pgo_mibc.h"
#include "pgo_tool.h"
#include "tool.h"

static const char pgo_usage[] =
    "Usage: mantra pgo INPUT... -o PROFILE [--format text|json|mibc] [-r PATH]... [--uncompressed]\n"
    "       mantra pgo --top N TRACE...|PROFILE [-o PROFILE [--format text|json]]\n"
    "       mantra pgo --check PROFILE\n"
    "\n"
    "Converts the PGO data of .NET traces (JitInstrumentationDataVerbose 298 and JitInstrumentationData\n"
    "297 events of Microsoft-Windows-DotNETRuntime, as the runtime writes them at shutdown with\n"
    "DOTNET_TieredPGO and the keyword 0x10000000000) into a profile. Chunks are reassembled by\n"
    "dotnet-pgo's rules (an out-of-order chunk or one after the final chunk discards the method's\n"
    "data), methods are identified by module (IL file name + PDB GUID) and token, and the same method\n"
    "met twice (several traces) is merged by summing its counts (PgoFormat.cs Merge rules). An INPUT\n"
    "is a trace or a .mibc (dotnet-pgo's or ours: a ZIP archive or the assembly, told by its first bytes).\n"
    "\n"
    "  -o PROFILE          where the profile goes ('-': standard output)\n"
    "  --format text|json|mibc\n"
    "                      text: the CLR's DOTNET_WritePGOData format (default); json: one document\n"
    "                      {\"methods\":[...],\"stats\":{...}} (docs/cli.md); mibc: what dotnet-pgo writes\n"
    "                      and crossgen2 --mibc reads (a metadata-only assembly in a ZIP container)\n"
    "  -r PATH             an assembly, or a folder of them, to resolve methods and handles against\n"
    "                      (writing a .mibc: besides the paths of the trace's ModuleLoad events; reading\n"
    "                      one: to find each method's token, so that it merges with a trace's)\n"
    "  --uncompressed      (mibc) the assembly itself, without the ZIP container\n"
    "  --top N             print the N hottest methods (sum of block counts) and their hottest blocks;\n"
    "                      reads traces, or a text profile (a file starting with '*** START PGO Data')\n"
    "  --check PROFILE     parse a text profile as the CLR reader does; errors as PATH:LINE: message\n"
    "\n"
    "A summary of what was converted and what was dropped (with reasons) goes to standard error.\n"
    "Exit status: 0 success (a truncated trace gives what was complete), 1 unreadable trace, profile\n"
    "errors (--check) or an output that cannot be written, 2 usage error.\n";

typedef struct pgo_args {
    const char **inputs;
    size_t ninputs;
    const char *output;
    int json, mibc, uncompressed;
    const char **refs;
    size_t nrefs;
    const char *check;
    size_t top;
    int have_top;
} pgo_args;

static int parse_args(int argc, char **argv, pgo_args *a) {
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(s, "--help") == 0 || strcmp(s, "-h") == 0) {
            fputs(pgo_usage, stdout);
            return TOOL_OK;
        }
        if (strcmp(s, "--version") == 0) {
            printf("mantra %s\n", MANTRA_VERSION_STRING);
            return TOOL_OK;
        }
        if (strcmp(s, "-o") == 0 || strcmp(s, "--output") == 0) {
            if (next == NULL || next[0] == '\0')
                return tool_usage_error("pgo", "%s needs a PROFILE", s);
            a->output = argv[++i];
        } else if (strcmp(s, "--format") == 0) {
            if (next == NULL || (strcmp(next, "text") != 0 && strcmp(next, "json") != 0 && strcmp(next, "mibc") != 0))
                return tool_usage_error("pgo", "--format needs 'text', 'json' or 'mibc'%s", "");
            a->json = strcmp(next, "json") == 0;
            a->mibc = strcmp(argv[++i], "mibc") == 0;
        } else if (strcmp(s, "-r") == 0 || strcmp(s, "--reference") == 0) {
            if (next == NULL || next[0] == '\0')
                return tool_usage_error("pgo", "%s needs a PATH", s);
            a->refs[a->nrefs++] = argv[++i];
        } else if (strcmp(s, "--uncompressed") == 0) {
            a->uncompressed = 1;
        } else if (strcmp(s, "--check") == 0) {
            if (next == NULL)
                return tool_usage_error("pgo", "--check needs a PROFILE%s", "");
            a->check = argv[++i];
        } else if (strcmp(s, "--top") == 0) {
            char *end = NULL;
            unsigned long long n = next ? strtoull(next, &end, 10) : 0;
            if (next == NULL || end == next || *end != '\0' || next[0] == '-')
                return tool_usage_error("pgo", "--top needs a number N%s", "");
            a->top = (size_t)n;
            a->have_top = 1;
            i++;
        } else if (s[0] == '-' && s[1] != '\0') {
            return tool_usage_error("pgo", "unknown option '%s'", s);
        } else {
            a->inputs[a->ninputs++] = s;
        }
    }
    if (a->check) {
        if (a->ninputs || a->output || a->have_top)
            return tool_usage_error("pgo", "--check takes one PROFILE and no other argument%s", "");
        return -1;
    }
    if (a->ninputs == 0)
        return tool_usage_error("pgo", "no input given (a trace or a .mibc)%s", "");
    if (a->output == NULL && !a->have_top)
        return tool_usage_error("pgo", "no output given (-o PROFILE)%s", "");
    if (a->uncompressed && !a->mibc)
        return tool_usage_error("pgo", "--uncompressed goes with --format mibc%s", "");
    if (a->mibc && a->have_top)
        return tool_usage_error("pgo", "--top reads profiles in the text format, not --format mibc%s", "");
    return -1;
}


/* Reads and parses a text profile; its errors are printed (PATH:LINE: message). NULL (reported)
 * when it cannot be read or parsed. */
static mantra_pgo_text *parse_profile(const char *path) {
    size_t size = 0;
    char *text = tool_read_file(path, &size);
    if (text == NULL) {
        fprintf(stderr, "mantra pgo: %s: cannot read the profile\n", path);
        return NULL;
    }
    mantra_pgo_text *t = NULL;
    int rc = mantra_pgo_text_parse(text, size, path, &t);
    free(text);
    if (rc < 0) {
        fprintf(stderr, "mantra pgo: %s: %s\n", path, mantra_strerror(rc));
        return NULL;
    }
    for (size_t i = 0; mantra_pgo_text_error(t, i); i++)
        fprintf(stderr, "%s\n", mantra_pgo_text_error(t, i));
    return t;
}

static int cmd_check(const char *path) {
    mantra_pgo_text *t = parse_profile(path);
    if (t == NULL)
        return TOOL_BAD_INPUT;
    size_t errors = mantra_pgo_text_error_count(t);
    printf("%s: %zu methods, %zu errors, %zu lines skipped\n", path, mantra_pgo_text_method_count(t), errors,
           mantra_pgo_text_skipped_lines(t));
    mantra_pgo_text_free(t);
    return errors ? TOOL_BAD_INPUT : TOOL_OK;
}

/* What an input is, told by its first bytes (a trace otherwise, whose reader says what is wrong). */
typedef enum input_kind { INPUT_TRACE, INPUT_TEXT, INPUT_JSON, INPUT_MIBC } input_kind;

static input_kind kind_of(const char *path) {
    static const char start[] = "*** START PGO Data";
    char head[sizeof start] = {0};
    FILE *f = strcmp(path, "-") == 0 ? NULL : fopen(path, "rb");
    if (f == NULL)
        return INPUT_TRACE;
    size_t n = fread(head, 1, sizeof head - 1, f);
    size_t ws = 0; /* JSON: the first character other than white space is '{' */
    int c = 0;
    while (ws < n && (head[ws] == ' ' || head[ws] == '\t' || head[ws] == '\n' || head[ws] == '\r'))
        ws++;
    if (ws == n) /* white space all through the head: look further */
        while ((c = fgetc(f)) == ' ' || c == '\t' || c == '\n' || c == '\r')
            ;
    else
        c = (unsigned char)head[ws];
    fclose(f);
    if (n == sizeof start - 1 && memcmp(head, start, n) == 0)
        return INPUT_TEXT;
    if (c == '{')
        return INPUT_JSON;
    if (n >= 2 && ((head[0] == 'P' && head[1] == 'K') || (head[0] == 'M' && head[1] == 'Z')))
        return INPUT_MIBC; /* a ZIP archive or the assembly itself */
    return INPUT_TRACE;
}

int pgo_read_input(pgo_profile *p, pgo_assemblies *asms, const char *path) {
    input_kind k = kind_of(path);
    return k == INPUT_TEXT   ? pgo_read_text(p, path)
           : k == INPUT_JSON ? pgo_read_json(p, path)
           : k == INPUT_MIBC ? pgo_read_mibc(p, asms, path)
                             : pgo_collect_trace(p, path);
}

static void summary(const pgo_profile *p) {
    const pgo_counts *c = &p->counts;
    char profiles[48] = "";
    if (c->profiles)
        snprintf(profiles, sizeof profiles, " and %" PRIu64 " profile%s", c->profiles, c->profiles == 1 ? "" : "s");
    fprintf(stderr,
            "mantra pgo: %zu method%s from %" PRIu64 " trace%s%s (%" PRIu64 " instrumentation events, %" PRIu64
            " methods read, %" PRIu64 " merged); dropped: %" PRIu64 " out of order, %" PRIu64 " after the final chunk (%" PRIu64
            " chunks), %" PRIu64 " incomplete, %" PRIu64 " bad payloads, %" PRIu64 " undecodable; %" PRIu64
            " merge conflicts; %" PRIu64 " of %" PRIu64 " handles unnamed\n",
            p->count, p->count == 1 ? "" : "s", c->traces, c->traces == 1 ? "" : "s", profiles, c->events, c->methods_read, c->merged,
            c->discard_out_of_order, c->discard_after_final, c->chunks_dropped, c->incomplete, c->bad_payloads,
            c->undecodable, c->merge_conflicts, c->handles_unnamed, c->handles);
    for (int r = 0; r < PGO_UNNAMED_REASONS; r++)
        if (c->unnamed_by[r])
            fprintf(stderr, "mantra pgo: %" PRIu64 " handle%s unnamed: %s\n", c->unnamed_by[r],
                    c->unnamed_by[r] == 1 ? "" : "s", pgo_unnamed_reasons[r].text);
    if (c->unfit_naming)
        fprintf(stderr, "mantra pgo: %" PRIu64 " module, assembly, method or type event%s did not fit %s template: ignored\n",
                c->unfit_naming, c->unfit_naming == 1 ? "" : "s", c->unfit_naming == 1 ? "its" : "their");
}

/* The .mibc: resolved against the assemblies, written whole or not at all. */
static int write_mibc(const pgo_args *a, const pgo_profile *p, pgo_assemblies *asms) {
    int rc = 0;
    uint8_t *bytes = NULL;
    size_t size = 0;
    pgo_mibc_counts c;
    memset(&c, 0, sizeof c);
    const char *base = strrchr(a->output, '/');
    base = strcmp(a->output, "-") == 0 ? "profile.mibc" : base ? base + 1 : a->output;
    rc = pgo_write_mibc(p, asms, base, !a->uncompressed, &bytes, &size, &c);
    if (rc == -2)
        fprintf(stderr, "mantra pgo: out of memory\n");
    if (rc != 0)
        return TOOL_BAD_INPUT;
    fprintf(stderr, "mantra pgo: .mibc: %" PRIu64 " of %" PRIu64 " methods written (%" PRIu64 " generic instantiations "
            "whose type arguments have no names, %" PRIu64 " without their assembly file, %" PRIu64 " unresolved); %" PRIu64
            " handles: %"
            PRIu64 " as tokens, %" PRIu64 " unknown\n", c.written, c.methods, c.generic, c.no_assembly, c.unresolved,
            c.handles, c.handle_tokens, c.handles_unknown);
    int to_stdout = strcmp(a->output, "-") == 0;
    FILE *out = to_stdout ? stdout : fopen(a->output, "wb");
    int ok = out != NULL && fwrite(bytes, 1, size, out) == size;
    if (out && fflush(out) != 0)
        ok = 0;
    if (out && !to_stdout && fclose(out) != 0)
        ok = 0;
    free(bytes);
    if (!ok) {
        fprintf(stderr, "mantra pgo: %s: the profile could not be written\n", a->output);
        return TOOL_BAD_INPUT;
    }
    return TOOL_OK;
}

static int write_output(const pgo_args *a, const pgo_profile *p, pgo_assemblies *asms) {
    if (a->mibc)
        return write_mibc(a, p, asms);
    int to_stdout = strcmp(a->output, "-") == 0;
    FILE *out = to_stdout ? stdout : fopen(a->output, "wb");
    if (out == NULL) {
        fprintf(stderr, "mantra pgo: %s: cannot create the profile\n", a->output);
        return TOOL_BAD_INPUT;
    }
    int rc = a->json ? pgo_write_json(out, p) : pgo_write_text(out, p);
    if (fflush(out) != 0 || ferror(out))
        rc = -1;
    if (!to_stdout && fclose(out) != 0)
        rc = -1;
    if (rc != 0) {
        fprintf(stderr, "mantra pgo: %s: the profile could not be written%s\n", a->output,
                rc == MANTRA_EINVAL ? " (a name with a newline cannot be written in the text format)" : "");
        return TOOL_BAD_INPUT;
    }
    return TOOL_OK;
}

int cmd_pgo(int argc, char **argv) {
    pgo_args a;
    memset(&a, 0, sizeof a);
    a.inputs = calloc((size_t)argc, sizeof *a.inputs);
    a.refs = calloc((size_t)argc, sizeof *a.refs);
    if (a.inputs == NULL || a.refs == NULL) {
        free(a.inputs);
        free(a.refs);
        return TOOL_BAD_INPUT;
    }
    int rc = parse_args(argc, argv, &a);
    if (rc >= 0 || a.check) {
        free(a.inputs);
        free(a.refs);
        return rc >= 0 ? rc : cmd_check(a.check);
    }
    pgo_profile p;
    memset(&p, 0, sizeof p);
    pgo_assemblies asms; /* -r PATH: for reading and for writing a .mibc */
    memset(&asms, 0, sizeof asms);
    int status = TOOL_OK;
    for (size_t i = 0; i < a.nrefs && status == TOOL_OK; i++) {
        int r = pgo_assemblies_add_path(&asms, a.refs[i]);
        status = r == -2 ? -2 : r < 0 ? TOOL_BAD_INPUT : TOOL_OK;
    }
    if (status == TOOL_BAD_INPUT) {
        pgo_assemblies_free(&asms);
        free(a.inputs);
        free(a.refs);
        return TOOL_BAD_INPUT;
    }
    for (size_t i = 0; i < a.ninputs && status != -2; i++) {
        const char *in = a.inputs[i];
        int r = pgo_read_input(&p, &asms, in);
        if (r == -2) {
            status = -2;
        } else if (r < 0) {
            status = TOOL_BAD_INPUT;
        }
    }
    if (status == -2) {
        fprintf(stderr, "mantra pgo: out of memory\n");
        pgo_profile_free(&p);
        pgo_assemblies_free(&asms);
        free(a.inputs);
        free(a.refs);
        return TOOL_BAD_INPUT;
    }
    if (p.counts.traces || p.counts.unreadable_traces || p.counts.profiles)
        summary(&p);
    int opened_all = p.counts.unreadable_traces == 0 || p.counts.traces > 0 || p.counts.profiles > 0;
    if (a.output && opened_all && write_output(&a, &p, &asms) != TOOL_OK)
        status = TOOL_BAD_INPUT;
    if (a.have_top)
        pgo_write_top(stdout, &p, a.top);
    pgo_profile_free(&p);
    pgo_assemblies_free(&asms);
    free(a.inputs);
    free(a.refs);
    return status;
}
