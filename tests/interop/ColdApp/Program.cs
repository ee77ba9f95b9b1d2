// ColdApp: a hot loop calling Step, whose rarely taken block (formatting, then a throw) crossgen2
// --hot-cold-splitting puts in Step's cold part; the caller catches. While an exception is
// dispatched, the return address into that cold part is on the stack, so samples see it.
//   ColdApp [ITERATIONS]   prints "SUM CAUGHT"
using System.Globalization;
using System.Runtime.CompilerServices;

static class ColdApp
{
    [MethodImpl(MethodImplOptions.NoInlining)]
    static int Step(int i, int[] data)
    {
        int v = data[i & 1023];
        if ((i & 127) == 127)
        {
            string msg = string.Format(CultureInfo.InvariantCulture, "step {0}: value {1} of {2} ({3:X8}) {4}", i, v,
                                       data.Length, v * 31, DescribeParity(i));
            throw new InvalidOperationException(msg + " / " + i.ToString(CultureInfo.InvariantCulture));
        }
        return v * 3 + (i ^ v);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static string DescribeParity(int i) => (i & 256) != 0 ? "high" : "low";

    static int Main(string[] args)
    {
        int n = args.Length > 0 ? int.Parse(args[0], CultureInfo.InvariantCulture) : 3_000_000;
        var data = new int[1024];
        for (int k = 0; k < data.Length; k++)
            data[k] = k * 7 + 1;
        long sum = 0;
        int caught = 0;
        for (int i = 0; i < n; i++)
        {
            try
            {
                sum += Step(i, data);
            }
            catch (InvalidOperationException e)
            {
                caught++;
                sum += e.Message.Length;
            }
        }
        Console.WriteLine(sum.ToString(CultureInfo.InvariantCulture) + " " + caught.ToString(CultureInfo.InvariantCulture));
        return 0;
    }
}
