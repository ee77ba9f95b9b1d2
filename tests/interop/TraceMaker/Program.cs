// TraceMaker: a .NET 10 program whose run makes the runtime events mantra's interop tests check
// (tests/interop/fresh_trace.py): GC, JIT, loader, type loads, thread pool, contention,
// exceptions, sample-profiler stacks, and an EventSource with every field type EventSource supports
// (scalars, strings, Guid, DateTime, enums, byte[] and an int[] array).
//
//   TraceMaker work          the workload once, then exit (run it with DOTNET_EnableEventPipe=1:
//                            the runtime writes the trace and its exit rundown)
//   TraceMaker serve SECONDS the workload in a loop for SECONDS (for `dotnet-trace collect -p PID`);
//                            prints "ready PID" first
using System.Diagnostics;
using System.Diagnostics.Tracing;
using System.Linq.Expressions;
using System.Text.RegularExpressions;

enum Color : int { Red = 1, Green = 2, Blue = 4 }

// EventSource events reach EventPipe through WriteEvent(int, object[]) only when the session's
// keywords include one of bits 44-47 (dotnet/runtime EventSource.cs: the EventPipe session's
// keywords are matched against the event's and the reserved channel bits); the tests enable
// 0xF00000000000 with this provider's own keywords. .NET 10 writes no field metadata for events with
// array arguments (Numbers), so no tool can show their fields.
[EventSource(Name = "Mantra-TraceMaker")]
sealed class MakerSource : EventSource
{
    public static readonly MakerSource Log = new();

    public static class Keywords
    {
        public const EventKeywords Scalars = (EventKeywords)0x1;
        public const EventKeywords Arrays = (EventKeywords)0x2;
    }

    [Event(1, Keywords = Keywords.Scalars, Level = EventLevel.Informational)]
    public void Scalars(bool flag, byte u8, sbyte i8, short i16, ushort u16, int i32, uint u32, long i64,
                        ulong u64, float f32, double f64, char ch, IntPtr ptr, Color color)
        => WriteEvent(1, flag, u8, i8, i16, u16, i32, u32, i64, u64, f32, f64, ch, ptr, color);

    [Event(2, Keywords = Keywords.Scalars, Level = EventLevel.Informational)]
    public void Texts(string text, string empty, Guid id, DateTime when)
        => WriteEvent(2, text, empty, id, when);

    [Event(3, Keywords = Keywords.Arrays, Level = EventLevel.Informational)]
    public void Blob(int tag, byte[] data) => WriteEvent(3, tag, data);

    [Event(5, Keywords = Keywords.Scalars, Level = EventLevel.Verbose, Opcode = EventOpcode.Start)]
    public void StepStart(int step) => WriteEvent(5, step);

    [Event(6, Keywords = Keywords.Scalars, Level = EventLevel.Verbose, Opcode = EventOpcode.Stop)]
    public void StepStop(int step) => WriteEvent(6, step);
}

// Arrays other than byte[] need the self-describing format (a manifest-based EventSource refuses
// the whole source: "Unsupported type Int32[] in event source"), and TraceLogging writes
// (EventSource.Write<T>) use it too.
[EventSource(Name = "Mantra-TraceMaker-SelfDescribing")]
sealed class SelfDescribingSource : EventSource
{
    public static readonly SelfDescribingSource Log = new();

    SelfDescribingSource() : base(EventSourceSettings.EtwSelfDescribingEventFormat) { }

    [Event(1, Keywords = (EventKeywords)0x2, Level = EventLevel.Informational)]
    public void Numbers(int tag, int[] values) => WriteEvent(1, tag, values);

    // a TraceLogging event with a bool: .NET 10 describes it as 4 bytes and writes 1
    public void Flags(bool flag, int n) =>
        Write("Flags", new EventSourceOptions { Level = EventLevel.Informational, Keywords = (EventKeywords)0x2 },
              new FlagsData { Flag = flag, N = n });

    [EventData]
    public sealed class FlagsData
    {
        public bool Flag { get; set; }
        public int N { get; set; }
    }
}

static class Program
{
    static readonly object Gate = new();
    static long _sink;

    static int Main(string[] args)
    {
        if (args.Length == 1 && args[0] == "work")
        {
            Work(0);
            return 0;
        }
        if (args.Length == 2 && args[0] == "serve" && int.TryParse(args[1], out int seconds))
        {
            Console.WriteLine($"ready {Environment.ProcessId}");
            Console.Out.Flush();
            var sw = Stopwatch.StartNew();
            for (int round = 0; sw.Elapsed.TotalSeconds < seconds; round++)
                Work(round);
            return 0;
        }
        Console.Error.WriteLine("usage: TraceMaker work | TraceMaker serve SECONDS");
        return 2;
    }

    static void Work(int round)
    {
        var log = MakerSource.Log;
        log.StepStart(round);
        // the EventSource: every scalar type, strings, a Guid, a DateTime, a byte[] and an int[]
        log.Scalars(true, 200, -100, -30000, 60000, -2000000000, 4000000000, -9000000000000000000,
                    18000000000000000000, 1.5f, -2.25, 'Z', new IntPtr(0x12345678), Color.Green);
        log.Scalars(false, 0, 0, 0, 0, 0, 0, 0, 0, 0f, 0.0, '\0', IntPtr.Zero, Color.Red | Color.Blue);
        log.Texts("héllo, wörld", "", new Guid("0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"),
                  new DateTime(2026, 1, 2, 3, 4, 5, DateTimeKind.Utc));
        log.Blob(7, new byte[] { 1, 2, 3, 0xFE, 0xFF });
        log.Blob(8, Array.Empty<byte>());
        SelfDescribingSource.Log.Numbers(9, new[] { 10, -20, 30 });
        SelfDescribingSource.Log.Flags(true, 5);

        // GC: small and large allocations, induced collections of every generation
        var keep = new List<byte[]>();
        for (int i = 0; i < 2000; i++)
            keep.Add(new byte[i % 100 == 0 ? 100_000 : 1_000]);
        GC.Collect(0);
        GC.Collect(1);
        GC.Collect(2, GCCollectionMode.Forced, blocking: true, compacting: true);
        _sink += keep.Count;

        // JIT and type loads: compiled expressions (dynamic methods), generic instantiations
        for (int i = 0; i < 20; i++)
        {
            var p = Expression.Parameter(typeof(int), "x");
            var f = Expression.Lambda<Func<int, int>>(Expression.Add(p, Expression.Constant(i + round)), p).Compile();
            _sink += f(i);
        }
        foreach (var t in new[] { typeof(int), typeof(string), typeof(Guid), typeof(Color), typeof(DateTime) })
        {
            var list = Activator.CreateInstance(typeof(List<>).MakeGenericType(t));
            var dict = Activator.CreateInstance(typeof(Dictionary<,>).MakeGenericType(t, typeof(object)));
            _sink += (list?.GetHashCode() ?? 0) + (dict?.GetHashCode() ?? 0);
        }

        // loader: an assembly the program has not used yet
        _sink += Regex.Matches("a1b22c333", "[0-9]+").Count;

        // thread pool
        Parallel.For(0, 64, i => Interlocked.Add(ref _sink, Busy(2_000 + i)));
        Task.WaitAll(Enumerable.Range(0, 16).Select(i => Task.Run(() => Busy(10_000 + i))).ToArray());

        // contention: threads that wait for one lock
        var threads = Enumerable.Range(0, 4).Select(_ => new Thread(() =>
        {
            for (int k = 0; k < 20; k++)
                lock (Gate) { Thread.Sleep(1); _sink++; }
        })).ToList();
        threads.ForEach(t => t.Start());
        threads.ForEach(t => t.Join());

        // exceptions: thrown and caught
        for (int i = 0; i < 5; i++)
        {
            try { Throw(i); }
            catch (InvalidOperationException e) { _sink += e.Message.Length; }
        }

        // the sample profiler: a busy stretch with managed frames on the stack
        var sw = Stopwatch.StartNew();
        while (sw.ElapsedMilliseconds < 200)
            _sink += Busy(50_000);
        log.StepStop(round);
    }

    static long Busy(int n)
    {
        long s = 0;
        for (int i = 0; i < n; i++)
            s += (i * 31) ^ (s >> 3);
        return s;
    }

    static void Throw(int i) => throw new InvalidOperationException($"TraceMaker exception {i}");
}
