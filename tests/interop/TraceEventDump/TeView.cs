// TeView.cs - TraceEvent's view of a trace, event by event, as EventLine values.
//
// Where each JSON key comes from (see ../README.md for the full table):
//   timestamp  TraceEvent.TimeStampQPC (public; the raw header timestamp of the file, exact)
//   provider   TraceEvent.ProviderName
//   event_id   (int)TraceEvent.ID
//   version    TraceEvent.Version
//   name       EventPipeMetadata.EventName of the metadata record the event was built from (internal,
//              read by reflection; it is the file's name after TraceEvent's transforms: "" for none,
//              "Start"/"Stop" suffix stripped when the opcode is Start/Stop)
//   thread_id  TraceEvent.ThreadID (a 32-bit int in TraceEvent)
//   sequence   0: TraceEvent does not expose the EventPipe sequence number
//   fields     TraceEvent.PayloadNames / PayloadValue(i), converted by Convert()
//   stack      the EVENT_RECORD's STACK_TRACE32/64 extended data item that EventPipeEventSource
//              attaches (internal TraceEvent.eventRecord, read by reflection), leaf first
using System.Collections;
using System.Globalization;
using System.Reflection;
using System.Runtime.InteropServices;
using Microsoft.Diagnostics.Tracing;
using Microsoft.Diagnostics.Tracing.Parsers;
using Microsoft.Diagnostics.Tracing.Parsers.Clr;
using Microsoft.Diagnostics.Tracing.EventPipe;

namespace Mantra.Interop;

public sealed unsafe class TeView : IDisposable
{
    public readonly EventPipeEventSource Source;
    public string? Error;              // exception text when Process() threw (truncated/corrupt)
    public long Count;
    public int FormatVersion;

    readonly Dictionary<IntPtr, string?> _names = new();
    readonly Action<EventLine, TraceEvent> _sink;

    // ---- reflection handles (TraceEvent 4.0.0 internals), resolved once --------------------------
    static readonly Assembly TeAsm = typeof(TraceEvent).Assembly;
    // Templates TraceEvent builds from a file's metadata (internal in 4.0.0).
    static readonly Type? DynamicType = TeAsm.GetType("Microsoft.Diagnostics.Tracing.Parsers.DynamicTraceEventData");
    static readonly FieldInfo? EventRecordField =
        typeof(TraceEvent).GetField("eventRecord", BindingFlags.Instance | BindingFlags.NonPublic);
    static readonly Type? RecordType = TeAsm.GetType("Microsoft.Diagnostics.Tracing.TraceEventNativeMethods+EVENT_RECORD");
    static readonly Type? ItemType = TeAsm.GetType("Microsoft.Diagnostics.Tracing.TraceEventNativeMethods+EVENT_HEADER_EXTENDED_DATA_ITEM");
    static readonly FieldInfo? MetadataDictField =
        typeof(EventPipeEventSource).GetField("_eventMetadataDictionary", BindingFlags.Instance | BindingFlags.NonPublic);
    static readonly PropertyInfo? FormatVersionProp =
        typeof(EventPipeEventSource).GetProperty("FileFormatVersionNumber", BindingFlags.Instance | BindingFlags.NonPublic);
    static readonly int OffExtCount = Off(RecordType, "ExtendedDataCount");
    static readonly int OffExtData = Off(RecordType, "ExtendedData");
    static readonly int OffItemType = Off(ItemType, "ExtType");
    static readonly int OffItemSize = Off(ItemType, "DataSize");
    static readonly int OffItemPtr = Off(ItemType, "DataPtr");
    static readonly int ItemSize = ItemType == null ? -1 : Marshal.SizeOf(ItemType);
    const ushort EXT_STACK_TRACE32 = 5, EXT_STACK_TRACE64 = 6;

    public static bool CanReadStacks => EventRecordField != null && OffExtCount >= 0 && OffExtData >= 0
                                        && OffItemType >= 0 && OffItemSize >= 0 && OffItemPtr >= 0 && ItemSize > 0;
    public static bool CanReadNames => EventRecordField != null && MetadataDictField != null;

    static int Off(Type? t, string field)
    {
        try { return t == null ? -1 : (int)Marshal.OffsetOf(t, field); }
        catch (ArgumentException) { return -1; }
    }

    public TeView(string path, Action<EventLine, TraceEvent> sink)
    {
        _sink = sink;
        Source = new EventPipeEventSource(path);
        // The parsers TraceEvent's own EventPipe tests use (EventPipeParsing.Streaming): the CLR
        // runtime, rundown and private providers, the sample profiler, and metadata-driven (dynamic)
        // events. Subscribing registers their templates; AllEvents then sees every event once.
        Action<TraceEvent> none = _ => { };
        Source.Clr.All += none;
        new ClrRundownTraceEventParser(Source).All += none;
        new ClrPrivateTraceEventParser(Source).All += none;
        new SampleProfilerTraceEventParser(Source).All += none;
        Source.Dynamic.All += none;
        Source.AllEvents += OnEvent;
    }

    public void Dispose() => Source.Dispose();

    /// <summary>Runs TraceEvent over the whole file. False when it threw (Error says why).</summary>
    public bool Process()
    {
        try
        {
            Source.Process();
            return true;
        }
        catch (Exception ex)
        {
            Error = $"{ex.GetType().Name}: {ex.Message}";
            return false;
        }
        finally
        {
            try { FormatVersion = (int)(FormatVersionProp?.GetValue(Source) ?? 0); } catch { FormatVersion = 0; }
        }
    }

    void OnEvent(TraceEvent data)
    {
        Count++;
        var e = new EventLine
        {
#pragma warning disable CS0618 // TimeStampQPC: "Not Obsolete but Discouraged"; it is the exact file value
            Timestamp = data.TimeStampQPC,
#pragma warning restore CS0618
            Provider = data.ProviderName ?? "",
            EventId = (int)data.ID,
            Version = data.Version,
            ThreadId = data.ThreadID,
            Sequence = 0,
            ActivityId = data.ActivityID,
            RelatedActivityId = data.RelatedActivityID,
            HasActivity = true,
            BuiltIn = DynamicType == null || !DynamicType.IsInstanceOfType(data),
        };
        void* rec = RecordPointer(data);
        e.Name = MetadataName(rec) ?? "";
        e.Fields = Fields(data);
        if (rec != null) ReadStack(rec, data.PointerSize, e.Stack);
        _sink(e, data);
    }

    static void* RecordPointer(TraceEvent data)
    {
        if (EventRecordField == null) return null;
        object? boxed = EventRecordField.GetValue(data);
        return boxed == null ? null : Pointer.Unbox(boxed);
    }

    // The metadata record whose EVENT_RECORD TraceEvent handed out for this event carries the name.
    string? MetadataName(void* rec)
    {
        if (rec == null || MetadataDictField == null) return null;
        if (_names.TryGetValue((IntPtr)rec, out var name)) return name;
        if (MetadataDictField.GetValue(Source) is IDictionary dict)
        {
            foreach (DictionaryEntry kv in dict)
            {
                object md = kv.Value!;
                var t = md.GetType();
                var recField = t.GetField("_eventRecord", BindingFlags.Instance | BindingFlags.NonPublic);
                var nameProp = t.GetProperty("EventName", BindingFlags.Instance | BindingFlags.Public | BindingFlags.NonPublic);
                if (recField == null || nameProp == null) continue;
                var p = (IntPtr)Pointer.Unbox(recField.GetValue(md)!);
                _names[p] = (string?)nameProp.GetValue(md);
            }
        }
        return _names.TryGetValue((IntPtr)rec, out name) ? name : null;
    }

    static void ReadStack(void* rec, int pointerSize, List<ulong> stack)
    {
        if (!CanReadStacks) return;
        byte* r = (byte*)rec;
        ushort n = *(ushort*)(r + OffExtCount);
        byte* items = *(byte**)(r + OffExtData);
        if (items == null) return;
        for (int i = 0; i < n; i++)
        {
            byte* item = items + i * ItemSize;
            ushort type = *(ushort*)(item + OffItemType);
            if (type != EXT_STACK_TRACE32 && type != EXT_STACK_TRACE64) continue;
            int size = *(ushort*)(item + OffItemSize);
            byte* p = (byte*)*(ulong*)(item + OffItemPtr) + 8;   // skip the MatchId
            int width = type == EXT_STACK_TRACE32 ? 4 : 8;
            for (int off = 0; off + width <= size - 8; off += width)
                stack.Add(width == 4 ? *(uint*)(p + off) : *(ulong*)(p + off));
        }
    }

    static JObject Fields(TraceEvent data)
    {
        var o = new JObject();
        string[] names;
        try { names = data.PayloadNames ?? Array.Empty<string>(); }
        catch (Exception ex) { o.Add("!error", $"PayloadNames: {ex.GetType().Name}: {ex.Message}"); return o; }
        for (int i = 0; i < names.Length; i++)
        {
            object? v;
            try { v = Convert(data.PayloadValue(i)); }
            catch (Exception ex) { v = $"!error: {ex.GetType().Name}: {ex.Message}"; }
            o.Add(names[i] ?? "", v);
        }
        return o;
    }

    /// <summary>A TraceEvent payload value in the docs/dump-json.md value model.</summary>
    public static object? Convert(object? v)
    {
        switch (v)
        {
            case null: return null;
            case bool b: return b;
            case string s: return s;
            case char c: return c.ToString();
            case Enum en:
                var ut = Enum.GetUnderlyingType(en.GetType());
                if (ut == typeof(ulong) || ut == typeof(uint) || ut == typeof(ushort) || ut == typeof(byte))
                    return System.Convert.ToUInt64(en, CultureInfo.InvariantCulture);
                return System.Convert.ToInt64(en, CultureInfo.InvariantCulture);
            case sbyte x: return (long)x;
            case short x: return (long)x;
            case int x: return (long)x;
            case long x: return x;
            case byte x: return (ulong)x;
            case ushort x: return (ulong)x;
            case uint x: return (ulong)x;
            case ulong x: return x;
            case IntPtr x: return (long)x;
            case UIntPtr x: return (ulong)x;
            case float f: return new F32(f);
            case double d: return d;
            case decimal m: return (double)m;
            case Guid g: return g.ToString("D");
            case DateTime dt:
                // TraceEvent builds DateTime.FromFileTime(raw) (local time); ToFileTime inverts it.
                try { return dt.Kind == DateTimeKind.Utc ? dt.ToFileTimeUtc() : dt.ToFileTime(); }
                catch (ArgumentOutOfRangeException) { return dt.Ticks; }
            case byte[] bytes: return new Hex(System.Convert.ToHexString(bytes).ToLowerInvariant());
            case IDictionary<string, object> dict:
                var o = new JObject();
                foreach (var kv in dict) o.Add(kv.Key, Convert(kv.Value));
                return o;
            case IEnumerable seq:
                var list = new List<object?>();
                foreach (var x in seq) list.Add(Convert(x));
                return list;
            default: return v.ToString();
        }
    }
}
