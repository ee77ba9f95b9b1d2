// TraceEventDump - mantra's interop harness: TraceEvent's view of a nettrace file.
// See ../README.md. Exit status: 0 ok, 1 difference / TraceEvent failure, 2 usage.
using System.Globalization;
using System.Text;
using Mantra.Interop;
using Microsoft.Diagnostics.Tracing;
using Microsoft.Diagnostics.Tracing.Etlx;

const string Usage = """
usage: TraceEventDump dump TRACE
       TraceEventDump compare TRACE OURS.jsonl [--max N] [--any-order] [--no-stacks]
       TraceEventDump stats TRACE
       TraceEventDump baseline TRACE BASELINE.txt [--samples]
       TraceEventDump read TRACE [--decode]
       TraceEventDump stacks TRACE
       TraceEventDump report TRACE
       TraceEventDump startstop TRACE
       TraceEventDump metadata ASSEMBLY

  dump      one JSON line per event, in the shape of docs/dump-json.md, in TraceEvent's dispatch order
  compare   OURS.jsonl (`mantra dump --json --sorted TRACE`, or - for stdin) against TraceEvent,
            event by event; prints differences and `compare: N events, M differences`; exit 0 when equal
  stats     {"format_version","complete","events","dropped","error","by_event","by_name"} as one JSON object
  read      the throughput baseline for bench/: EventPipeEventSource over TRACE, touching every event's
            header (and with --decode every payload value); prints {"events","seconds","bytes"}
  stacks    every event with a stack, its stack resolved through TraceLog (method names from the
            trace's MethodLoad/MethodDCEnd events, as dotnet-stack and PerfView do): one JSON line
            {"provider","name","thread_id","activity_id","frames":["Module!Method" or "0xADDRESS",...]}
            leaf first
  report    what `dotnet-stack report` prints for a trace it collected: the threads' stacks through
            SampleProfilerThreadTimeComputer and a MutableTraceEventStackSource, one
            "Thread (0xID):" block per thread with the first sample's frames, leaf first
  startstop the Start/Stop activities TraceEvent's StartStopActivityComputer (over TraceLog and an
            ActivityComputer, as PerfView's activity views) finds: one JSON line per activity
            {"activity_id","task","name","creator_id","start_ms","duration_ms"}, creator_id "" for none
  metadata  an assembly's PE headers and metadata rows as System.Reflection.Metadata reads them, in
            the text form of tests/ecma/md_dump.c (libmantra's reader): tests/ecma/md_compare.sh
  baseline  TraceEvent's counts per "provider/EventName" (through TraceLog, as perfview's tests make
            their *.baseline.txt) against BASELINE.txt; --samples also requires the first event's
            text to be identical
""";

var stdout = new StreamWriter(Console.OpenStandardOutput(), new UTF8Encoding(false), 1 << 16) { AutoFlush = false };
try
{
    return Run(args);
}
finally
{
    stdout.Flush();
}

int Run(string[] a)
{
    if (a.Length >= 1 && (a[0] == "-h" || a[0] == "--help")) { stdout.Write(Usage); return 0; }
    if (a.Length < 2) return Fail(Usage);
    string cmd = a[0], trace = a[1];
    if (!File.Exists(trace)) { Console.Error.WriteLine($"TraceEventDump: {trace}: no such file"); return 1; }
    switch (cmd)
    {
        case "dump":
            if (a.Length != 2) return Fail(Usage);
            return Dump(trace);
        case "stats":
            if (a.Length != 2) return Fail(Usage);
            return Stats(trace);
        case "stacks":
            if (a.Length != 2) return Fail(Usage);
            return Stacks(trace);
        case "report":
            if (a.Length != 2) return Fail(Usage);
            return Report(trace);
        case "startstop":
            if (a.Length != 2) return Fail(Usage);
            return StartStop(trace);
        case "metadata":
            if (a.Length != 2) return Fail(Usage);
            return MetadataDump.Run(trace, stdout);
        case "compare":
        {
            if (a.Length < 3) return Fail(Usage);
            var c = new Mantra.Interop.Comparer(stdout);
            for (int i = 3; i < a.Length; i++)
            {
                if (a[i] == "--any-order") c.AnyOrder = true;
                else if (a[i] == "--no-stacks") c.Stacks = false;
                else if (a[i] == "--max" && i + 1 < a.Length && int.TryParse(a[i + 1], out int m)) { c.MaxShown = m; i++; }
                else return Fail(Usage);
            }
            return c.Run(trace, a[2]);
        }
        case "read":
            if (a.Length > 3 || (a.Length == 3 && a[2] != "--decode")) return Fail(Usage);
            return Read(trace, a.Length == 3);
        case "baseline":
        {
            if (a.Length < 3) return Fail(Usage);
            bool samples = a.Length == 4 && a[3] == "--samples";
            if (a.Length > 4 || (a.Length == 4 && !samples)) return Fail(Usage);
            return Baseline(trace, a[2], samples);
        }
        default:
            return Fail(Usage);
    }
}

// Plain EventPipeEventSource, no TraceLog, no JSON: what a TraceEvent-based tool pays to read.
int Read(string trace, bool decode)
{
    var sw = System.Diagnostics.Stopwatch.StartNew();
    long events = 0, sink = 0;
    using (var source = new EventPipeEventSource(trace))
    {
        source.AllEvents += e =>
        {
            events++;
#pragma warning disable CS0618 // TimeStampQPC: "Not Obsolete but Discouraged"; the raw header value
            sink += e.TimeStampQPC + e.ThreadID + (int)e.ID;
#pragma warning restore CS0618
            if (decode)
            {
                var names = e.PayloadNames;
                for (int i = 0; i < names.Length; i++)
                    sink += e.PayloadValue(i)?.GetHashCode() ?? 0;
            }
        };
        source.Process();
    }
    sw.Stop();
    long bytes = new FileInfo(trace).Length;
    stdout.Write(string.Create(CultureInfo.InvariantCulture,
        $"{{\"events\":{events},\"seconds\":{sw.Elapsed.TotalSeconds:R},\"bytes\":{bytes},\"sink\":{sink & 1}}}\n"));
    return 0;
}

int Fail(string msg)
{
    Console.Error.Write(msg);
    return 2;
}

int Dump(string trace)
{
    var sb = new StringBuilder(1024);
    using var view = new TeView(trace, (e, _) =>
    {
        sb.Clear();
        Json.WriteEvent(sb, e);
        sb.Append('\n');
        stdout.Write(sb);
    });
    bool ok = view.Process();
    stdout.Flush();
    if (!ok)
    {
        Console.Error.WriteLine($"TraceEventDump: {trace}: TraceEvent stopped after {view.Count} events: {view.Error}");
        return 1;
    }
    return 0;
}

int Stats(string trace)
{
    var byEvent = new SortedDictionary<string, long>(StringComparer.Ordinal);
    var byName = new SortedDictionary<string, long>(StringComparer.Ordinal);
    using var view = new TeView(trace, (e, d) =>
    {
        string k = $"{e.Provider}/{e.EventId}/v{e.Version}";
        byEvent[k] = byEvent.GetValueOrDefault(k) + 1;
        string n = $"{d.ProviderName}/{d.EventName}";
        byName[n] = byName.GetValueOrDefault(n) + 1;
    });
    bool ok = view.Process();
    var sb = new StringBuilder();
    sb.Append("{\"format_version\":").Append(view.FormatVersion.ToString(CultureInfo.InvariantCulture));
    sb.Append(",\"complete\":").Append(ok ? "true" : "false");
    sb.Append(",\"pointer_size\":").Append(view.Source.PointerSize.ToString(CultureInfo.InvariantCulture));
    sb.Append(",\"events\":").Append(view.Count.ToString(CultureInfo.InvariantCulture));
    sb.Append(",\"dropped\":").Append(view.Source.EventsLost.ToString(CultureInfo.InvariantCulture));
    sb.Append(",\"error\":");
    if (view.Error == null) sb.Append("null"); else Json.WriteString(sb, view.Error);
    AppendCounts(sb, "by_event", byEvent);
    AppendCounts(sb, "by_name", byName);
    sb.Append("}\n");
    stdout.Write(sb);
    return 0;
}

static void AppendCounts(StringBuilder sb, string key, SortedDictionary<string, long> counts)
{
    sb.Append(",\"").Append(key).Append("\":{");
    bool first = true;
    foreach (var kv in counts)
    {
        if (!first) sb.Append(',');
        first = false;
        Json.WriteString(sb, kv.Key);
        sb.Append(':').Append(kv.Value.ToString(CultureInfo.InvariantCulture));
    }
    sb.Append('}');
}

// The stacks of the trace's events, resolved by TraceLog's code-address table (TraceLog.cs: the
// MethodLoadVerbose/MethodDCEndVerbose ranges of jitted code), what dotnet-stack report prints.
int Stacks(string trace)
{
    return WithTraceLog(trace, "stacks", log =>
    {
        var sb = new StringBuilder();
        var ils = new List<int>();
        foreach (var data in log.Events)
        {
            var cs = data.CallStack();
            if (cs == null) continue;
            sb.Clear();
            sb.Append("{\"provider\":"); Json.WriteString(sb, data.ProviderName ?? "");
            sb.Append(",\"name\":"); Json.WriteString(sb, data.EventName ?? "");
            sb.Append(",\"thread_id\":").Append(data.ThreadID.ToString(CultureInfo.InvariantCulture));
#pragma warning disable CS0618 // TimeStampQPC: the raw header value, to pair events with mantra's
            sb.Append(",\"timestamp\":").Append(data.TimeStampQPC.ToString(CultureInfo.InvariantCulture));
#pragma warning restore CS0618
            sb.Append(",\"activity_id\":\"").Append(data.ActivityID.ToString("D")).Append('"');
            sb.Append(",\"frames\":[");
            bool first = true;
            for (var f = cs; f != null; f = f.Caller)
            {
                if (!first) sb.Append(',');
                first = false;
                var ca = f.CodeAddress;
                string method = ca.FullMethodName;
                string text = string.IsNullOrEmpty(method)
                    ? "0x" + ca.Address.ToString("x", CultureInfo.InvariantCulture)
                    : (string.IsNullOrEmpty(ca.ModuleName) ? "?" : ca.ModuleName) + "!" + method;
                Json.WriteString(sb, text);
                ils.Add(ca.ILOffset);
            }
            // each frame's IL offset as TraceLog gives it (from the IL-to-native maps; < 0: none)
            sb.Append("],\"il\":[");
            for (int k = 0; k < ils.Count; k++)
                sb.Append(k == 0 ? "" : ",").Append(ils[k].ToString(CultureInfo.InvariantCulture));
            ils.Clear();
            sb.Append("]}\n");
            stdout.Write(sb);
        }
    });
}

// Runs body over a TraceLog of trace (an .etlx beside the build's other files, deleted after):
// 0, or 1 when TraceLog fails (printed).
int WithTraceLog(string trace, string what, Action<TraceLog> body)
{
    string dir = Environment.GetEnvironmentVariable("MANTRA_BINARY_DIR") is { Length: > 0 } b ? b : Path.GetTempPath();
    string etlx = Path.Combine(dir, $"te-{what}-{Environment.ProcessId}-{Path.GetFileName(trace)}.etlx");
    try
    {
        TraceLog.CreateFromEventPipeDataFile(trace, etlx);
        using var log = new TraceLog(etlx);
        body(log);
        return 0;
    }
    catch (Exception ex)
    {
        Console.Error.WriteLine($"TraceEventDump: {trace}: TraceLog failed: {ex.GetType().Name}: {ex.Message}");
        return 1;
    }
    finally
    {
        try { File.Delete(etlx); } catch (IOException) { }
    }
}

// TraceEvent's Start/Stop activity computation (StartStopActivityComputer: EventSource Start/Stop
// events whose ActivityIDs are activity paths, their creators found through RelatedActivityID).
#pragma warning disable CS0618 // StartStopActivity is marked [Obsolete] as "experimental"
int StartStop(string trace)
{
    return WithTraceLog(trace, "startstop", log =>
    {
        var source = log.Events.GetSource();
        var tasks = new ActivityComputer(source, null!);
        var computer = new StartStopActivityComputer(source, tasks, false);
        var seen = new List<StartStopActivity>();
        var known = new HashSet<StartStopActivity>();
        computer.Start += (activity, data) => { if (known.Add(activity)) seen.Add(activity); };
        source.Process();
        var sb = new StringBuilder();
        foreach (var a in seen)
        {
            sb.Clear();
            sb.Append("{\"activity_id\":\"").Append(a.ActivityID.ToString("D")).Append('"');
            sb.Append(",\"task\":"); Json.WriteString(sb, a.TaskName ?? "");
            sb.Append(",\"name\":"); Json.WriteString(sb, a.Name ?? "");
            sb.Append(",\"creator_id\":\"").Append(a.Creator == null ? "" : a.Creator.ActivityID.ToString("D")).Append('"');
            sb.Append(",\"start_ms\":").Append(a.StartTimeRelativeMSec.ToString("R", CultureInfo.InvariantCulture));
            sb.Append(",\"duration_ms\":").Append(a.DurationMSec.ToString("R", CultureInfo.InvariantCulture));
            sb.Append("}\n");
            stdout.Write(sb);
        }
    });
}
#pragma warning restore CS0618

// dotnet-stack report's view (dotnet/diagnostics, src/Tools/dotnet-stack/ReportCommand.cs): the
// thread-time stacks of the samples, grouped by their "Thread (ID)" frame; each thread's first
// sample printed leaf first, up to that frame.
int Report(string trace)
{
    return WithTraceLog(trace, "report", log =>
    {
        var source = new Microsoft.Diagnostics.Tracing.Stacks.MutableTraceEventStackSource(log) { OnlyManagedCodeStacks = true };
        var computer = new SampleProfilerThreadTimeComputer(log, new Microsoft.Diagnostics.Symbols.SymbolReader(TextWriter.Null));
        computer.GenerateThreadTimeStacks(source);
        var first = new SortedDictionary<string, Microsoft.Diagnostics.Tracing.Stacks.StackSourceCallStackIndex>(StringComparer.Ordinal);
        source.ForEach(sample =>
        {
            var idx = sample.StackIndex;
            while (idx != Microsoft.Diagnostics.Tracing.Stacks.StackSourceCallStackIndex.Invalid)
            {
                string name = source.GetFrameName(source.GetFrameIndex(idx), false);
                if (name.StartsWith("Thread (", StringComparison.Ordinal))
                {
                    first.TryAdd(name, sample.StackIndex);
                    break;
                }
                idx = source.GetCallerIndex(idx);
            }
        });
        foreach (var (thread, stack) in first)
        {
            stdout.WriteLine(thread + ":");
            for (var idx = stack; idx != Microsoft.Diagnostics.Tracing.Stacks.StackSourceCallStackIndex.Invalid; idx = source.GetCallerIndex(idx))
            {
                string name = source.GetFrameName(source.GetFrameIndex(idx), false);
                if (name.StartsWith("Thread (", StringComparison.Ordinal)) break;
                stdout.WriteLine("  " + name);
            }
        }
    });
}

// perfview's EventPipeParsing.Basic test: TraceLog over the file, AllEvents of its source, records
// keyed "ProviderName/EventName" with a count and the first event's ToString().
int Baseline(string trace, string baselinePath, bool samples)
{
    var expected = new SortedDictionary<string, (long count, string sample)>(StringComparer.Ordinal);
    foreach (var raw in File.ReadAllLines(baselinePath))
    {
        var line = raw.TrimStart('\uFEFF');
        if (line.Length == 0) continue;
        int c1 = line.IndexOf(", ", StringComparison.Ordinal);
        int c2 = c1 < 0 ? -1 : line.IndexOf(", ", c1 + 2, StringComparison.Ordinal);
        if (c2 < 0 || !long.TryParse(line.AsSpan(c1 + 2, c2 - c1 - 2), NumberStyles.None, CultureInfo.InvariantCulture, out long n))
        {
            Console.Error.WriteLine($"TraceEventDump: {baselinePath}: cannot read line \"{line}\"");
            return 1;
        }
        expected[line[..c1]] = (n, line[(c2 + 2)..]);
    }

    var actual = new SortedDictionary<string, (long count, string sample)>(StringComparer.Ordinal);
    if (WithTraceLog(trace, "baseline", log =>
    {
        var source = log.Events.GetSource();
        source.AllEvents += data =>
        {
            string key = data.ProviderName + "/" + data.EventName;
            if (actual.TryGetValue(key, out var r)) actual[key] = (r.count + 1, r.sample);
            else actual[key] = (1, SampleText(data));
        };
        source.Process();
    }) != 0)
        return 1;

    // Known renames between the TraceEvent that wrote the baselines and 4.0.0 (see README.md); the
    // first-event text of a renamed type necessarily differs and is not compared.
    var renamed = new HashSet<string>(StringComparer.Ordinal);
    foreach (var (oldKey, newKeys) in BaselineAliases())
    {
        if (!expected.ContainsKey(oldKey) || actual.ContainsKey(oldKey) || !newKeys.All(actual.ContainsKey)) continue;
        actual[oldKey] = (newKeys.Sum(k => actual[k].count), actual[newKeys[0]].sample);
        foreach (var k in newKeys) actual.Remove(k);
        renamed.Add(oldKey);
        stdout.WriteLine($"{oldKey}: counted as {string.Join(" + ", newKeys)} (TraceEvent 4.0.0 name)");
    }

    int diffs = 0, sampleDiffs = 0;
    foreach (var key in expected.Keys.Union(actual.Keys).OrderBy(k => k, StringComparer.Ordinal))
    {
        bool he = expected.TryGetValue(key, out var e), ha = actual.TryGetValue(key, out var t);
        if (!he || !ha || e.count != t.count)
        {
            diffs++;
            stdout.WriteLine($"{key}: baseline {(he ? e.count : 0)}, traceevent {(ha ? t.count : 0)}");
        }
        else if (!renamed.Contains(key) && !SampleEquals(e.sample, t.sample))
        {
            sampleDiffs++;
            if (samples)
                stdout.WriteLine($"{key}: first event differs:\n  baseline   {e.sample}\n  traceevent {t.sample}");
        }
    }
    long total = actual.Values.Sum(v => v.count);
    stdout.WriteLine($"baseline: {expected.Count} event types, {total} events, {diffs} count differences, " +
                     $"{sampleDiffs} first-event text differences{(samples ? "" : " (not checked)")}");
    return diffs == 0 && (!samples || sampleDiffs == 0) ? 0 : 1;
}

// The first event's text as perfview's test writes it: ToString() with Windows newlines (the
// baselines were made on Windows), \r and \n escaped, cut at 1000 characters.
static string SampleText(TraceEvent data)
{
    string s = data.ToString().Replace("\r\n", "\n").Replace("\n", "\r\n");
    return new string(s.Replace("\n", "\\n").Replace("\r", "\\r").Take(1000).ToArray());
}

// Equal texts, or texts whose attribute values differ only in floating-point digits: the baselines
// were written by .NET Framework (15 significant digits), .NET Core prints the shortest round-trip
// form. Both texts are cut at 1000 characters, so a longer number moves the cut: compare up to the
// last attribute both contain completely.
static bool SampleEquals(string baseline, string actual)
{
    if (baseline == actual) return true;
    var rx = new System.Text.RegularExpressions.Regex("=\"([^\"]*)\"");
    var a = rx.Matches(baseline);
    var b = rx.Matches(actual);
    bool cut = baseline.Length >= 1000 || actual.Length >= 1000;
    int n = Math.Min(a.Count, b.Count);
    if (!cut && a.Count != b.Count) return false;
    for (int i = 0; i < n; i++)
    {
        string x = a[i].Groups[1].Value, y = b[i].Groups[1].Value;
        if (x == y) continue;
        if (!double.TryParse(x, NumberStyles.Float, CultureInfo.InvariantCulture, out double dx) ||
            !double.TryParse(y, NumberStyles.Float, CultureInfo.InvariantCulture, out double dy))
            return false;
        if (Math.Abs(dx - dy) > 1e-13 * Math.Max(Math.Abs(dx), Math.Abs(dy))) return false;
    }
    // the text between the values must agree too
    string ra = rx.Replace(baseline, "=\"#\""), rb = rx.Replace(actual, "=\"#\"");
    if (!cut) return ra == rb;
    int len = Math.Min(ra.Length, rb.Length);
    int lastA = ra.LastIndexOf("=\"#\"", StringComparison.Ordinal), lastB = rb.LastIndexOf("=\"#\"", StringComparison.Ordinal);
    len = Math.Min(len, Math.Min(lastA, lastB));
    return len > 0 && ra[..len] == rb[..len];
}

static (string, string[])[] BaselineAliases() => new[]
{
    // ClrEtwAll.man events 200/201 (IncreaseMemoryPressure / DecreaseMemoryPressure, task GC): older
    // TraceEvent named both "GC"; 4.0.0 has no template for them and says "EventID(200)"/"EventID(201)".
    ("Microsoft-Windows-DotNETRuntime/GC", new[] { "Microsoft-Windows-DotNETRuntime/EventID(200)", "Microsoft-Windows-DotNETRuntime/EventID(201)" }),
};
