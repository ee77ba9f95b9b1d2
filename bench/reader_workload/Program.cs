// reader_workload: work for a real-shaped trace (bench/reader_real_trace.sh runs it under
// DOTNET_EnableEventPipe): several threads allocating small objects, strings and arrays (GC and
// allocation-tick events), contended locks, thrown and caught exceptions, and many small generic
// methods JIT-compiled; the sample profiler adds stacks of every thread. Runs until the file named
// by the first argument reaches the size in MB of the second (or the third, a limit in seconds).
using System.Diagnostics;

string path = args.Length > 0 ? args[0] : "";
long targetMb = args.Length > 1 ? long.Parse(args[1]) : 100;
int limitS = args.Length > 2 ? int.Parse(args[2]) : 300;
int threads = Math.Max(4, Environment.ProcessorCount * 2);
var stop = new CancellationTokenSource();
var gate = new object();
long shared = 0;
var workers = new Thread[threads];
for (int t = 0; t < threads; t++)
{
    int id = t;
    workers[t] = new Thread(() =>
    {
        var rnd = new Random(id);
        var keep = new List<object>();
        long n = 0;
        while (!stop.IsCancellationRequested)
        {
            n++;
            keep.Add(Work.Make(rnd, n));
            if (keep.Count > 2000)
                keep.RemoveRange(0, 1000);
            if ((n & 255) == 0)
                lock (gate) { shared += Work.Spin(rnd.Next(200)); }
            if ((n & 4095) == 0)
            {
                try { Work.Throw(n); } catch (InvalidOperationException) { }
            }
        }
    }) { Name = "worker-" + t, IsBackground = true };
    workers[t].Start();
}
var sw = Stopwatch.StartNew();
while (sw.Elapsed.TotalSeconds < limitS)
{
    Thread.Sleep(500);
    if (path.Length > 0 && File.Exists(path) && new FileInfo(path).Length >= targetMb << 20)
        break;
    Work.JitMore((int)sw.ElapsedMilliseconds);
}
stop.Cancel();
foreach (var w in workers)
    w.Join();
Console.WriteLine($"reader_workload: {sw.Elapsed.TotalSeconds:F1} s, {GC.CollectionCount(0)} gen0 GCs, {shared & 1}");

static class Work
{
    public static object Make(Random rnd, long n)
    {
        switch (n % 5)
        {
            case 0: return new byte[16 + rnd.Next(512)];
            case 1: return "item-" + n.ToString();
            case 2: return new List<int>(rnd.Next(32)) { 1, 2, 3 };
            case 3: return new Dictionary<long, string> { [n] = "v" };
            default: return new Tuple<long, double>(n, rnd.NextDouble());
        }
    }

    public static long Spin(int k)
    {
        long s = 0;
        for (int i = 0; i < k; i++)
            s += i * 31 ^ s;
        return s;
    }

    public static void Throw(long n) => throw new InvalidOperationException("workload " + n);

    // a few new generic instantiations now and then: JIT and type-load events
    public static void JitMore(int seed)
    {
        var types = new[] { typeof(int), typeof(long), typeof(string), typeof(double), typeof(byte), typeof(Guid) };
        var t = types[seed % types.Length];
        var u = types[(seed / 7) % types.Length];
        var g = typeof(Dictionary<,>).MakeGenericType(t, u);
        Activator.CreateInstance(g);
        var l = typeof(List<>).MakeGenericType(g);
        Activator.CreateInstance(l);
    }
}
