// TraceMaker: a .NET 10 program whose run makes the runtime events mantra's interop tests check
// (tests/interop/fresh_trace.py): GC, JIT, loader, type loads, thread pool, contention,
// exceptions, sample-profiler stacks, and an EventSource with every field type EventSource supports
// (scalars, strings, Guid, DateTime, enums, byte[] and an int[] array).
//
//   TraceMaker work          the workload once, then exit (run it with DOTNET_EnableEventPipe=1:
//                            the runtime writes the trace and its exit rundown)
//   TraceMaker serve SECONDS the workload in a loop for SECONDS (for `dotnet-trace collect -p PID`);
//                            prints "ready PID" first
//   TraceMaker sweep         the workload and then whatever else makes the runtime write events
//                            (a heap walk through a second session of its own, a background GC, LOH
//                            compaction, finalizers, GC handles, pinning, weak references, P/Invoke
//                            stubs, assembly resolution handlers, assembly load contexts, multicore
//                            JIT, sockets, registered waits, tasks and async methods, the array
//                            pool, tiered compilation, wait handles, timers, thread starts,
//                            exception filters and finally blocks), once, then exit: run it with
//                            every keyword of the runtime's providers (fresh_trace.py sweep)
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
    // A Meter whose values the tests know: a gauge that is always 42, a counter of Work rounds and
    // a histogram that records 5 each round (counters_compare.py reads them with mantra counters)
    static readonly System.Diagnostics.Metrics.Meter Meter = new("Mantra.TraceMaker");
    static readonly System.Diagnostics.Metrics.ObservableGauge<int> Answer =
        Meter.CreateObservableGauge("mantra.tracemaker.answer", () => 42, "{answer}");
    static readonly System.Diagnostics.Metrics.Counter<long> Rounds = Meter.CreateCounter<long>("mantra.tracemaker.rounds");
    static readonly System.Diagnostics.Metrics.Histogram<double> Steps = Meter.CreateHistogram<double>("mantra.tracemaker.step", "s");
    static long _sink;

    static int Main(string[] args)
    {
        if (args.Length == 1 && args[0] == "work")
        {
            Work(0);
            return 0;
        }
        if (args.Length == 1 && args[0] == "sweep")
        {
            Work(0);
            Sweep();
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
        Console.Error.WriteLine("usage: TraceMaker work | TraceMaker serve SECONDS | TraceMaker sweep");
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
        Rounds.Add(1);
        Steps.Record(5.0);
        GC.KeepAlive(Answer);
    }

    [System.Runtime.InteropServices.DllImport("libc", EntryPoint = "getpid")]
    static extern int GetPid();

    // a string argument needs marshalling: the runtime generates IL that marshals it, and says so
    // with its ILStubGenerated event
    [System.Runtime.InteropServices.DllImport("libc", EntryPoint = "strlen")]
    static extern nint StrLen(string s);

    [System.Runtime.InteropServices.UnmanagedFunctionPointer(System.Runtime.InteropServices.CallingConvention.Cdecl)]
    delegate nint StrLenFn(string s);

    sealed class Finalized
    {
        public static int Count;
        ~Finalized() => Interlocked.Increment(ref Count);
    }

    static int Hot(int x) => (x * 7) ^ (x >> 2);

    static bool Log(Exception e) { _sink += e.Message.Length; return true; }

    static void Sweep()
    {
        SweepExtra();
        // finalizers, weak references, GC handles and pinning
        for (int i = 0; i < 100; i++)
            _ = new Finalized();
        var weak = new WeakReference(new object());
        var pinned = System.Runtime.InteropServices.GCHandle.Alloc(new byte[64], System.Runtime.InteropServices.GCHandleType.Pinned);
        var normal = System.Runtime.InteropServices.GCHandle.Alloc(new object());
        GC.Collect();
        GC.WaitForPendingFinalizers();
        GC.Collect(2, GCCollectionMode.Forced, blocking: true, compacting: true);
        _sink += Finalized.Count + (weak.IsAlive ? 1 : 0);
        pinned.Free();
        normal.Free();
        // a background GC, and allocations on the large and pinned object heaps
        GC.Collect(2, GCCollectionMode.Optimized, blocking: false);
        _sink += GC.AllocateArray<byte>(100_000, pinned: true).Length + new byte[200_000].Length;

        // P/Invoke: getpid through a DllImport (blittable: no marshalling IL of its own)
        for (int i = 0; i < 3; i++)
            _sink += GetPid();

        // an assembly load context loading an assembly again
        var alc = new System.Runtime.Loader.AssemblyLoadContext("sweep", isCollectible: true);
        var asm = alc.LoadFromAssemblyPath(typeof(Regex).Assembly.Location);
        _sink += asm.GetTypes().Length;
        alc.Unload();

        // tiered compilation: a hot method called until it is recompiled
        var sw = Stopwatch.StartNew();
        while (sw.ElapsedMilliseconds < 1500)
            for (int i = 0; i < 10_000; i++)
                _sink += Hot(i);

        // wait handles, timers, thread starts
        using (var ev = new ManualResetEventSlim(false))
        using (var timer = new Timer(_ => ev.Set(), null, 20, Timeout.Infinite))
            ev.Wait(2000);
        using (var mre = new ManualResetEvent(false))
            mre.WaitOne(10);
        Task.Delay(20).Wait();
        var t = new Thread(() => _sink += Busy(1000));
        t.Start();
        t.Join();

        // exceptions through a filter and a finally block, and one rethrown
        for (int i = 0; i < 3; i++)
        {
            try
            {
                try { Throw(i); }
                finally { _sink++; }
            }
            catch (InvalidOperationException e) when (Log(e)) { }
            try
            {
                try { Throw(i); }
                catch (InvalidOperationException) { throw; }
            }
            catch (InvalidOperationException e) { _sink += e.HResult; }
        }
        GC.Collect();
    }

    static void SweepExtra()
    {
        // a second session of this process's own, enabling GCHeapCollect: the runtime walks the
        // heap in a forced GC (GCBulkNode, GCBulkEdge, GCBulkRootEdge, ...), written to every
        // session that enables GCHeapDump (the startup session does), and enabling
        // AppDomainResourceManagement late sends what only a late enable sends (ThreadTerminated)
        var client = new Microsoft.Diagnostics.NETCore.Client.DiagnosticsClient(Environment.ProcessId);
        var providers = new[] { new Microsoft.Diagnostics.NETCore.Client.EventPipeProvider(
            "Microsoft-Windows-DotNETRuntime", EventLevel.Verbose, 0x800000 | 0x100000 | 0x800) };
        var cwt = new System.Runtime.CompilerServices.ConditionalWeakTable<object, object>();
        var key = new object();
        cwt.Add(key, new byte[10]);
        using (var session = client.StartEventPipeSession(providers, requestRundown: false, circularBufferMB: 16))
        {
            var drain = Task.Run(() => session.EventStream.CopyTo(Stream.Null));
            Thread.Sleep(1500);
            GC.Collect();
            Thread.Sleep(200);
            session.Stop();
            drain.Wait(5000);
        }
        GC.KeepAlive(key);

        // a background GC that really runs: objects that survive until the gen-2 budget triggers one
        // (an induced non-blocking GC right after blocking ones is done blocking), while this thread
        // goes on allocating
        long bgc = GC.GetGCMemoryInfo(GCKind.Background).Index;
        var keep = new List<byte[]>();
        for (int i = 0; i < 400_000 && GC.GetGCMemoryInfo(GCKind.Background).Index == bgc; i++)
        {
            keep.Add(new byte[i % 64 == 0 ? 100_000 : 1000]);  // large objects wait for the BGC's planning
            if (i % 50_000 == 49_999)
                GC.Collect(2, GCCollectionMode.Forced, blocking: false);
        }
        _sink += keep.Count;
        keep = null;

        // compacting the large object heap once
        System.Runtime.GCSettings.LargeObjectHeapCompactionMode = System.Runtime.GCLargeObjectHeapCompactionMode.CompactOnce;
        GC.Collect();
        GC.Collect(2, GCCollectionMode.Aggressive, blocking: true, compacting: true);

        // marshalling stubs, and a delegate for a native function
        _sink += StrLen("sweep");
        var lib = System.Runtime.InteropServices.NativeLibrary.Load("libc.so.6");
        var strlen = System.Runtime.InteropServices.Marshal.GetDelegateForFunctionPointer<StrLenFn>(
            System.Runtime.InteropServices.NativeLibrary.GetExport(lib, "strlen"));
        _sink += strlen("delegate");

        // a wait registered with the thread pool, signalled three times
        using (var signal = new AutoResetEvent(false))
        using (var done = new CountdownEvent(3))
        {
            var reg = ThreadPool.RegisterWaitForSingleObject(signal, (_, _) => done.Signal(), null, 5000, false);
            for (int i = 0; i < 3; i++)
            {
                signal.Set();
                Thread.Sleep(20);
            }
            done.Wait(5000);
            reg.Unregister(null);
        }

        // assembly resolution handlers: AppDomain.AssemblyResolve and the default context's Resolving
        AppDomain.CurrentDomain.AssemblyResolve += (_, _) => null;
        System.Runtime.Loader.AssemblyLoadContext.Default.Resolving += (_, _) => null;
        try { System.Reflection.Assembly.Load("Mantra.Sweep.Missing"); }
        catch (FileNotFoundException) { _sink++; }

        // multicore JIT (ProfileOptimization, MulticoreJit events): its profile goes to MANTRA_SWEEP_DIR
        var dir = Environment.GetEnvironmentVariable("MANTRA_SWEEP_DIR");
        if (dir != null)
        {
            System.Runtime.ProfileOptimization.SetProfileRoot(dir);
            System.Runtime.ProfileOptimization.StartProfile("sweep.jitprofile");
        }

        // sockets: I/O completions on the thread pool
        var listener = new System.Net.Sockets.TcpListener(System.Net.IPAddress.Loopback, 0);
        listener.Start();
        var port = ((System.Net.IPEndPoint)listener.LocalEndpoint).Port;
        var accept = listener.AcceptTcpClientAsync();
        using (var c = new System.Net.Sockets.TcpClient())
        {
            c.ConnectAsync(System.Net.IPAddress.Loopback, port).Wait();
            using var server = accept.Result;
            var buf = new byte[16];
            for (int i = 0; i < 10; i++)
            {
                var read = server.GetStream().ReadAsync(buf, 0, buf.Length);
                c.GetStream().WriteAsync(new byte[] { 1, 2, 3 }, 0, 3).Wait();
                _sink += read.Result;
            }
        }
        listener.Stop();
        // the core library's own event sources: tasks and async methods (TplEventSource), parallel
        // loops, the shared array pool, a name lookup
        Parallel.Invoke(() => _sink += Busy(100), () => _sink += Busy(200));
        _sink += AwaitChain(3).Result;
        var pool = System.Buffers.ArrayPool<byte>.Shared;
        var rented = pool.Rent(5000);
        pool.Return(rented);
        _sink += System.Buffers.ArrayPool<byte>.Create().Rent(100).Length;
        _sink += System.Net.Dns.GetHostAddresses("localhost").Length;
        ThreadPool.QueueUserWorkItem(_ => _sink++);
        ThreadPool.UnsafeQueueUserWorkItem(_ => _sink++, null);
        Thread.Sleep(50);
    }

    static async Task<long> AwaitChain(int depth)
    {
        await Task.Yield();
        if (depth == 0)
        {
            await Task.Delay(5);
            return 1;
        }
        return 1 + await AwaitChain(depth - 1);
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
