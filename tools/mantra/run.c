/* mantra run - assembles a program of the reference interpreter (docs/interp.md) and runs it:
 * program output on stdout, assembler errors as FILE:LINE:COL: error: MESSAGE on stderr
 * (docs/cli.md "mantra run"). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mantra/image.h"
#include "mantra/interp.h"
#include "mantra/pump.h"
#include "mantra/session.h"
#include "tool.h"

#ifdef MANTRA_TOOL_HAVE_DOTNET
#include "dotnet_registry.h"
#endif
#ifdef MANTRA_TOOL_HAVE_DOTNET_PGO
#include "dotnet_pgo.h"
#include "dotnet_stacks.h"
#include "run_host.h"
#endif

static const char run_usage[] =
    "Usage: mantra run PROGRAM|IMAGE [--trace FILE] [--providers SPEC] [--entry METHOD] [--probes]\n"
    "                  [--pgo-collect FILE[:SECONDS]] [--pgo-deltas] [--reload IMAGE2] [ARGS...]\n"
    "\n"
    "Assembles PROGRAM (interpreter assembly, docs/interp.md; '-' reads standard input) and runs\n"
    "its entry method with ARGS (int64 or double, as its signature says). The program's output goes\n"
    "to stdout; assembler errors are printed as FILE:LINE:COL: error: MESSAGE.\n"
    "\n"
    "An IMAGE (mantra precompile's output, told from a program by its magic) is checked, mapped\n"
    "read-only and executed in place; a damaged or foreign file is refused with the check that failed\n"
    "and its offset. Loading it writes AssemblyLoad, ModuleLoad and DomainModuleLoad, each method's\n"
    "first call R2RGetEntryPointStart, R2RGetEntryPoint (version 1, with the size) and R2RMethodLoad\n"
    "(hot and cold parts), unloading MethodUnloadVerbose and ModuleUnload (docs/image-format.md).\n"
    "\n"
    "  --reload IMAGE2   (images) after the run, unload the image, load IMAGE2 at the same address\n"
    "                    when it is free, and run the entry again (stderr says which address)\n"
    "  --entry METHOD    the method to run: Namespace.Name or a unique Name (default main)\n"
    "  --trace FILE      record a trace of the run in FILE (a session started before the program\n"
    "                    is loaded and stopped after it returns)\n"
    "  --providers SPEC  that session's providers, dotnet-trace syntax (default\n"
    "                    Microsoft-Windows-DotNETRuntime:0x10000000018:5, the JitInstrumentationData\n"
    "                    keyword under which PGO data is written, with Loader and Jit for the\n"
    "                    module and method events that identify it); an entry for\n"
    "                    Microsoft-Windows-DotNETRuntimeRundown:KEYWORDS sets the session's rundown\n"
    "                    keywords (Loader 0x8, Jit 0x10, NGen 0x20, Start 0x40 also at start, End 0x100);\n"
    "                    Mantra-Interp:0x1 writes every method enter and leave with its kind,\n"
    "                    Mantra-Interp:0x2 async calls' Start/Suspend/Resume/Stop with activity ids\n"
    "                    (docs/profiler.md); Microsoft-DotNETCore-SampleProfiler samples the stacks\n"
    "  --probes          after the run, print every probe on stderr:\n"
    "                    probe METHOD TOKEN IL_OFFSET COUNT (IL offsets in hex, counts in decimal)\n"
    "  --pgo-collect FILE[:SECONDS]\n"
    "                    collect PGO data into the trace FILE: a session with\n"
    "                    Microsoft-Windows-DotNETRuntime:0x10000000018:5 stopped after SECONDS (default\n"
    "                    10), or when the program ends; its stop writes ModuleLoad, MethodLoadVerbose\n"
    "                    and JitInstrumentationDataVerbose events for every instrumented method\n"
    "  --pgo-deltas      every PGO flush (sessions, collections) holds the counts since the previous\n"
    "                    one: the counters restart from 0 as they are read (default: cumulative)\n";

/* The rest of the help (one string literal stays under C's 4095 characters). */
static const char run_usage_more[] =
    "\n"
    "Every session whose providers take JitInstrumentationDataVerbose (keyword 0x10000000000) gets\n"
    "the PGO data when it stops (the --trace session with its default providers too). SIGUSR2 starts\n"
    "a collection into MANTRA_PGOCollectPath (default pgo-{pid}-{n}.nettrace: {pid} the process id, {n}\n"
    "the collection's number from 1) for MANTRA_PGOCollectSeconds\n"
    "(default 10); MANTRA_PGOCollectReset=1 makes collections hold deltas (counters reset after each\n"
    "snapshot). MANTRA_WritePGOData=1 with MANTRA_PGODataPath writes the CLR text format at exit;\n"
    "MANTRA_ReadPGOData=1 reads one back into the counters' initial values (docs/pgo.md).\n"
    "\n"
    "Environment: MANTRA_InterpPgo=0|1|2 (probes: off, method entry and loop heads, every basic\n"
    "block), MANTRA_InterpPgoMethods=GLOB,... (which methods get probes; * and ?), and the\n"
    "MANTRA_* startup tracing variables (MANTRA_EnableEventPipe=1, ...).\n"
    "\n"
    "Sessions that enable Microsoft-DotNETCore-SampleProfiler get a ThreadSample event with the\n"
    "interpreted call stack every MANTRA_SampleProfilerIntervalMs (default 1) ms, and sessions with\n"
    "rundown the MethodDCEndVerbose events that name those stacks' methods (docs/interp.md); a\n"
    "--trace session whose providers name the SampleProfiler gets rundown at stop.\n"
    "\n"
    "Exit status: 0 success, 1 bad program (assembler error, run-time fault, trace failure),\n"
    "2 usage error.\n";

#define RUN_DEFAULT_PROVIDERS "Microsoft-Windows-DotNETRuntime:0x10000000018:5"

static int parse_arg(const char *s, int is_double, mantra_interp_value *v) {
    char *end;
    errno = 0;
    if (is_double) {
        v->d = strtod(s, &end);
    } else {
        long long x = strtoll(s, &end, 0);
        v->i = (int64_t)x;
    }
    return (errno != 0 || end == s || *end != '\0') ? -1 : 0;
}

/* Finds entry in m, checks that ARGS (args, nargs) are as many as its arguments and parses them by
 * its argument types into values (nargs + 1 of them). TOOL_OK, or TOOL_BAD_INPUT after reporting
 * (reloaded: program is the --reload image, whose missing entry or other count is reported as such). */
static int entry_args(const mantra_interp_module *m, const char *program, const char *entry, const char *const *args,
                      size_t nargs, int reloaded, mantra_interp_value *values) {
    int64_t mi = mantra_interp_module_find(m, entry);
    int count = mi < 0 ? -1 : mantra_interp_module_arg_count(m, (size_t)mi);
    if (reloaded && (mi < 0 || (size_t)count != nargs)) {
        fprintf(stderr, "mantra run: %s: no method '%s' taking %zu arguments\n", program, entry, nargs);
        return TOOL_BAD_INPUT;
    }
    if (mi < 0) {
        fprintf(stderr, "mantra run: %s: no method '%s' (or the short name is ambiguous)\n", program, entry);
        return TOOL_BAD_INPUT;
    }
    if ((size_t)count != nargs) {
        fprintf(stderr, "mantra run: %s: '%s' takes %d argument%s, %zu given\n", program, entry, count,
                count == 1 ? "" : "s", nargs);
        return TOOL_BAD_INPUT;
    }
    for (size_t k = 0; k < nargs; k++) {
        int dbl = mantra_interp_module_arg_is_double(m, (size_t)mi, k);
        if (parse_arg(args[k], dbl, &values[k]) != 0) {
            fprintf(stderr, "mantra run: argument %zu '%s' is not %s\n", k + 1, args[k], dbl ? "a number" : "an int64");
            return TOOL_BAD_INPUT;
        }
    }
    return TOOL_OK;
}

static void print_probes(const mantra_interp_program *p) {
    const mantra_interp_module *m = mantra_interp_program_module(p);
    for (size_t i = 0; i < mantra_interp_module_method_count(m); i++) {
        mantra_interp_method_identity id;
        mantra_interp_probes pr;
        mantra_interp_module_method(m, i, &id);
        mantra_interp_program_probes(p, i, &pr);
        uint32_t *counts = calloc(pr.count ? pr.count : 1, sizeof *counts);
        if (counts == NULL || mantra_interp_program_counts(p, i, counts) != 0) {
            free(counts);
            continue;
        }
        for (uint32_t k = 0; k < pr.count; k++)
            fprintf(stderr, "probe %s%s%s 0x%08" PRIx32 " IL_%04" PRIx32 " %" PRIu32 "\n", id.namespace_name,
                    id.namespace_name[0] ? "." : "", id.name, id.token, pr.il_offsets[k], counts[k]);
        free(counts);
    }
}

#ifdef MANTRA_TOOL_HAVE_DOTNET_PGO
/* --pgo-collect FILE[:SECONDS]: a trailing :DIGITS is the window. */
static int start_collect(const char *spec, unsigned flags) {
    char *path = strdup(spec);
    if (path == NULL)
        return MANTRA_ENOMEM;
    uint32_t seconds = 0;
    char *colon = strrchr(path, ':');
    if (colon != NULL && colon[1] != '\0' && strspn(colon + 1, "0123456789") == strlen(colon + 1)) {
        seconds = (uint32_t)strtoul(colon + 1, NULL, 10);
        *colon = '\0';
    }
    int rc = mantra_pgo_collect_ex(path, seconds, flags, NULL);
    if (rc < 0) {
        const char *e = mantra_session_last_error();
        fprintf(stderr, "mantra run: --pgo-collect %s: %s\n", path, e[0] ? e : mantra_strerror(rc));
    }
    free(path);
    return rc;
}
#endif

/* 1 when path starts with an image's magic (docs/image-format.md). */
static int is_image(const char *path) {
    if (strcmp(path, "-") == 0)
        return 0;
    FILE *f = fopen(path, "rb");
    char head[8] = {0};
    size_t n = f ? fread(head, 1, sizeof head, f) : 0;
    if (f)
        fclose(f);
    return n == sizeof head && memcmp(head, "MANTRAIM", 8) == 0;
}

static int open_image(const char *path, const void *hint, mantra_image **out) {
    mantra_image_error err = {0, ""};
    int rc = mantra_image_open(path, hint, out, &err);
    if (rc == MANTRA_EFORMAT)
        fprintf(stderr, "mantra run: %s: offset %" PRIu64 ": %s\n", path, err.offset, err.message);
    else if (rc == MANTRA_EIO)
        fprintf(stderr, "mantra run: %s: %s\n", path, err.message);
    else if (rc != 0)
        fprintf(stderr, "mantra run: %s: %s\n", path, mantra_strerror(rc));
    return rc;
}

/* The --trace session's rundown keywords from its --providers (parsed as the session parses them):
 * an entry for the rundown provider gives its keyword mask (none or all: the .NET default set; the
 * session layer adds a start rundown for StartRundown 0x40); else, with the SampleProfiler, the
 * default rundown at stop, for the samples' method names; else none. */
static uint64_t rundown_keywords(const char *spec) {
    size_t n = 0, cap = 64;
    mantra_provider_spec *e = calloc(cap, sizeof *e); /* 64 entries, as a session takes */
    if (e == NULL || mantra_provider_spec_parse(spec, e, cap, &n, NULL) != MANTRA_OK)
        n = 0; /* the session's start reports the spec's error */
    uint64_t kw = 0;
    int rundown = 0;
    for (size_t i = 0; i < n && !rundown; i++) {
        if (strcmp(e[i].name, MANTRA_RUNDOWN_PROVIDER) == 0) {
            rundown = 1;
            kw = e[i].keywords == 0 || e[i].keywords == UINT64_MAX ? MANTRA_DEFAULT_RUNDOWN_KEYWORDS : e[i].keywords;
        } else if (strcmp(e[i].name, "Microsoft-DotNETCore-SampleProfiler") == 0) {
            kw = MANTRA_DEFAULT_RUNDOWN_KEYWORDS;
        }
    }
    free(e);
    return kw;
}

/* Runs entry on a new thread of prog; 0, or an exit status after reporting. */
static int run_entry(const mantra_interp_program *prog, const char *program, const char *entry,
                     const mantra_interp_value *values, size_t nargs, int probes) {
    mantra_interp_thread *thr = NULL;
    int rc = mantra_interp_thread_create(prog, NULL, &thr);
    if (rc != 0) {
        fprintf(stderr, "mantra run: %s\n", mantra_strerror(rc));
        return TOOL_BAD_INPUT;
    }
    int status = TOOL_OK;
    rc = mantra_interp_thread_run(thr, entry, values, nargs, NULL);
    fflush(stdout);
    if (rc != 0) {
        fprintf(stderr, "mantra run: %s: %s\n", program, mantra_interp_thread_last_error(thr));
        status = TOOL_BAD_INPUT;
    }
    if (probes)
        print_probes(prog);
    mantra_interp_thread_free(thr);
    return status;
}

int cmd_run(int argc, char **argv) {
    const char *program = NULL, *trace = NULL, *providers = RUN_DEFAULT_PROVIDERS, *entry = "main";
    const char *collect = NULL, *reload = NULL;
    int probes = 0, dashdash = 0, deltas = 0;
    const char **args = calloc((size_t)argc, sizeof *args);
    size_t nargs = 0;
    if (args == NULL) {
        fprintf(stderr, "mantra run: out of memory\n");
        return TOOL_BAD_INPUT;
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!dashdash && strncmp(a, "--", 2) == 0) {
            if (strcmp(a, "--") == 0) {
                dashdash = 1;
            } else if (strcmp(a, "--help") == 0) {
                fputs(run_usage, stdout);
                fputs(run_usage_more, stdout);
                free(args);
                return TOOL_OK;
            } else if (strcmp(a, "--probes") == 0) {
                probes = 1;
            } else if (strcmp(a, "--pgo-deltas") == 0) {
                deltas = 1;
            } else if (strcmp(a, "--trace") == 0 || strcmp(a, "--providers") == 0 || strcmp(a, "--entry") == 0 ||
                       strcmp(a, "--pgo-collect") == 0 || strcmp(a, "--reload") == 0) {
                if (i + 1 >= argc) {
                    free(args);
                    return tool_usage_error("run", "%s needs a value", a);
                }
                const char *v = argv[++i];
                if (a[2] == 'p' && a[3] == 'g')
                    collect = v;
                else if (a[2] == 't')
                    trace = v;
                else if (a[2] == 'p')
                    providers = v;
                else if (a[2] == 'r')
                    reload = v;
                else
                    entry = v;
            } else {
                free(args);
                return tool_usage_error("run", "unknown option '%s'", a);
            }
        } else if (!dashdash && strcmp(a, "-h") == 0) {
            fputs(run_usage, stdout);
            fputs(run_usage_more, stdout);
            free(args);
            return TOOL_OK;
        } else if (program == NULL) {
            program = a;
        } else {
            args[nargs++] = a;
        }
    }
    if (program == NULL) {
        free(args);
        return tool_usage_error("run", "%s", "no PROGRAM given");
    }
    int image = is_image(program);
    if (reload != NULL && !image) {
        free(args);
        return tool_usage_error("run", "%s", "--reload needs an IMAGE to run");
    }

    /* the program assembled and its entry's arguments parsed; an image is opened (checked) once the
     * sessions are up, so that its load events are in them, and its arguments parsed then */
    mantra_interp_module *mod = NULL;
    mantra_image *im = NULL;
    int status = TOOL_OK;
    mantra_interp_value *values = NULL;
    if (!image) {
        if (tool_assemble("run", program, &mod) != 0) {
            free(args);
            return TOOL_BAD_INPUT;
        }
    }
    values = calloc(nargs + 1, sizeof *values);
    if (values == NULL) {
        fprintf(stderr, "mantra run: out of memory\n");
        status = TOOL_BAD_INPUT;
    } else if (!image) {
        status = entry_args(mod, program, entry, args, nargs, 0, values);
    }
    if (status != TOOL_OK) {
        free(args);
        free(values);
        mantra_interp_module_free(mod);
        return status;
    }

    /* sessions: the environment's (startup tracing) and --trace's */
#ifdef MANTRA_TOOL_HAVE_DOTNET
    (void)mantra_dotnet_register();
#endif
    mantra_session_id sid = 0;
    if (mantra_init() < 0) {
        const char *e = mantra_session_last_error();
        fprintf(stderr, "mantra run: %s\n", e[0] ? e : "startup tracing failed");
        free(args);
        free(values);
        mantra_interp_module_free(mod);
        return TOOL_BAD_INPUT;
    }
#ifdef MANTRA_TOOL_HAVE_DOTNET_PGO
    unsigned pgo_flags = deltas ? MANTRA_PGO_FLUSH_DELTAS : 0u;
    (void)mantra_dotnet_pgo_init(pgo_flags);
    /* ThreadSample of the interpreter's threads and the method rundown (docs/interp.md "Sampling");
     * the threadless build has no sampler thread */
    (void)mantra_dotnet_stacks_init(0);
    (void)mantra_dotnet_images_init(); /* images' load, first-call and unload events */
    (void)mantra_dotnet_interp_events_init(); /* Mantra-Interp: enter/leave, async logical calls */
    if (collect != NULL && start_collect(collect, pgo_flags) < 0) {
        free(args);
        free(values);
        mantra_interp_module_free(mod);
        mantra_shutdown();
        return TOOL_BAD_INPUT;
    }
#else
    (void)deltas;
    if (collect != NULL) {
        free(args);
        free(values);
        mantra_interp_module_free(mod);
        return tool_usage_error("run", "%s", "--pgo-collect needs the mantra_dotnet_pgo library");
    }
#endif
    if (trace != NULL) {
        mantra_session_config c;
        mantra_session_config_init(&c);
        c.providers = providers;
        c.output = MANTRA_SESSION_OUTPUT_FILE;
        c.path = trace;
        c.rundown_keywords = rundown_keywords(providers);
        if (mantra_session_start(&sid, &c) < 0) {
            const char *e = mantra_session_last_error();
            fprintf(stderr, "mantra run: %s\n", e[0] ? e : "cannot start the session");
            free(args);
            free(values);
            mantra_interp_module_free(mod);
            mantra_shutdown();
            return TOOL_BAD_INPUT;
        }
    }

#ifdef MANTRA_TOOL_HAVE_DOTNET_PGO
    {
        /* every collection its own file: pgo-PID-1.nettrace, pgo-PID-2.nettrace, ... */
        if (mantra_pgo_collect_watch("pgo-{pid}-{n}.nettrace") == 0)
            (void)run_host_start(mantra_pgo_collect_request, !mantra_threadless());
    }
#endif
    mantra_interp_program *prog = NULL;
    if (image) {
        if (open_image(program, NULL, &im) != 0) {
            status = TOOL_BAD_INPUT;
        } else {
            const char *pgo = getenv("MANTRA_InterpPgo");
            if (pgo != NULL && pgo[0] != '\0' && strcmp(pgo, "0") != 0)
                fprintf(stderr, "mantra run: %s: precompiled code has no probes (MANTRA_InterpPgo=%s not used)\n",
                        program, pgo);
            if (probes)
                fprintf(stderr, "mantra run: %s: precompiled code has no probes (--probes prints none)\n", program);
            status = entry_args(mantra_image_module(im), program, entry, args, nargs, 0, values);
            if (status == TOOL_OK)
                status = run_entry(mantra_image_program(im), program, entry, values, nargs, probes);
        }
        if (status == TOOL_OK && reload != NULL) {
            /* unload, load reload at the same address where it is free, run again (its entry's
             * arguments parsed again: its argument types may differ) */
            const void *base = mantra_image_base(im);
            mantra_image_close(im);
            im = NULL;
            if (open_image(reload, base, &im) != 0) {
                status = TOOL_BAD_INPUT;
            } else {
                fprintf(stderr, "mantra run: %s reloaded at %s address\n", reload,
                        mantra_image_base(im) == base ? "the same" : "another");
                status = entry_args(mantra_image_module(im), reload, entry, args, nargs, 1, values);
                if (status == TOOL_OK)
                    status = run_entry(mantra_image_program(im), reload, entry, values, nargs, probes);
            }
        }
    } else {
        int rc = mantra_interp_load(mod, NULL, &prog);
        if (rc == MANTRA_EINVAL) {
            fprintf(stderr, "mantra run: MANTRA_InterpPgo must be 0, 1 or 2\n");
            status = TOOL_BAD_INPUT;
        } else if (rc != 0) {
            fprintf(stderr, "mantra run: %s\n", mantra_strerror(rc));
            status = TOOL_BAD_INPUT;
        } else {
            status = run_entry(prog, program, entry, values, nargs, probes);
        }
    }
#ifdef MANTRA_TOOL_HAVE_DOTNET_PGO
    mantra_interp_sampler_stop(); /* no more samples; the rundown stays for the stops below */
    mantra_pgo_collect_unwatch();
    run_host_stop();
    if (mantra_threadless())
        mantra_pump(); /* a SIGUSR2 during the run: its collection starts now and ends at shutdown */
#endif
    if (sid != 0 && mantra_session_stop(sid) < 0) {
        const char *e = mantra_session_last_error();
        fprintf(stderr, "mantra run: %s: %s\n", trace, e[0] ? e : "cannot stop the session");
        status = TOOL_BAD_INPUT;
    }
    mantra_shutdown();
    if (mantra_threadless())
        mantra_pump();
    mantra_image_close(im);
    mantra_interp_program_free(prog);
    mantra_interp_module_free(mod);
    free(values);
    free(args);
    return status;
}
