// CounterCheck TRACE PROVIDER INTERVAL_SEC - what dotnet-counters makes of a trace's EventCounters.
//
// dotnet-counters turns each EventCounters event into a counter value with
// TraceEventExtensions.TryGetCounterPayload (dotnet/diagnostics,
// src/Microsoft.Diagnostics.Monitoring.EventPipe/Counters/TraceEventExtensions.cs), filtered by a
// CounterFilter for the requested provider and refresh interval (CounterFilter.cs). Both are
// internal to the tool's Microsoft.Diagnostics.Monitoring.EventPipe.dll, so this program calls them
// by reflection (signatures of the 10.0.750501 tool) on every event TraceEvent (the tool's own
// copy) reads, and prints one JSON line per accepted value:
//   {"provider":..,"name":..,"display":..,"type":"Metric"|"Rate","value":..,"unit":..,"interval":..}
// Exit 0 when the trace was read, 1 otherwise.
using System;
using System.Globalization;
using System.Reflection;
using Microsoft.Diagnostics.Tracing;

if (args.Length != 3)
{
    Console.Error.WriteLine("usage: CounterCheck TRACE PROVIDER INTERVAL_SEC");
    return 2;
}
Assembly monitoring = Assembly.Load("Microsoft.Diagnostics.Monitoring.EventPipe");
Type T(string name) => monitoring.GetType("Microsoft.Diagnostics.Monitoring.EventPipe." + name, true);
const BindingFlags Any = BindingFlags.Public | BindingFlags.NonPublic | BindingFlags.Instance | BindingFlags.Static;

float interval = float.Parse(args[2], CultureInfo.InvariantCulture);
object filter = Activator.CreateInstance(T("CounterFilter"), Any, null, new object[] { interval }, null);
T("CounterFilter").GetMethod("AddFilter", Any, null, new[] { typeof(string) }, null).Invoke(filter, new object[] { args[1] });
object config = Activator.CreateInstance(T("CounterConfiguration"), Any, null, new[] { filter }, null);
object cache = Activator.CreateInstance(T("CounterMetadataCache"), true);
MethodInfo tryGet = T("TraceEventExtensions").GetMethod("TryGetCounterPayload", Any, null,
    new[] { typeof(TraceEvent), T("CounterMetadataCache"), T("CounterConfiguration"), T("ICounterPayload").MakeByRefType() }, null);
Type payloadType = T("ICounterPayload");
string Str(object o) => o == null ? "null" : "\"" + o.ToString().Replace("\\", "\\\\").Replace("\"", "\\\"") + "\"";
object Get(object o, Type t, string p) => t.GetProperty(p, Any).GetValue(o);

using var source = new EventPipeEventSource(args[0]);
int lines = 0;
source.Dynamic.All += ev =>
{
    object[] callArgs = { ev, cache, config, null };
    if (!(bool)tryGet.Invoke(null, callArgs))
        return;
    object p = callArgs[3];
    object meta = Get(p, payloadType, "CounterMetadata");
    Type mt = meta.GetType();
    string value = ((double)Get(p, payloadType, "Value")).ToString("R", CultureInfo.InvariantCulture);
    string iv = ((float)Get(p, payloadType, "Interval")).ToString("R", CultureInfo.InvariantCulture);
    Console.WriteLine("{\"provider\":" + Str(Get(meta, mt, "ProviderName")) + ",\"name\":" + Str(Get(meta, mt, "CounterName"))
        + ",\"display\":" + Str(Get(p, payloadType, "DisplayName")) + ",\"type\":" + Str(Get(p, payloadType, "CounterType"))
        + ",\"value\":" + value + ",\"unit\":" + Str(Get(p, payloadType, "Unit")) + ",\"interval\":" + iv + "}");
    lines++;
};
source.Process();
Console.Error.WriteLine($"CounterCheck: {lines} counter values");
return 0;
