// Compare.cs - our `mantra dump --json` lines against TraceEvent's view of the same trace.
//
// Tolerance rules (also in ../README.md; every rule names the TraceEvent behaviour behind it):
//  * sequence is never compared: TraceEvent does not expose EventPipe sequence numbers.
//  * thread_id is compared on its low 32 bits: TraceEvent keeps thread ids in a 32-bit int.
//  * name is compared only when ours is non-empty. Equal, or ours = TraceEvent's + "Start"/"Stop"
//    when TraceEvent's opcode is 1/2 (TraceEvent strips the suffix of Start/Stop events).
//  * fields are compared only when ours is non-empty (the runtime writes empty metadata for its own
//    providers; TraceEvent decodes those with built-in parsers; where ours has {} the event is
//    compared on its header).
//  * fields TraceEvent decoded with a built-in parser (CLR runtime/rundown/private, sample profiler:
//    the template is not a DynamicTraceEventData made from the file's metadata) are matched by
//    name: those parsers use their own order, hide reserved fields (Reserved1 of ModuleLoad) and add
//    derived ones (OptimizationTier); a field on one side only is not compared, at least one must be
//    common. MethodFlags: TraceEvent masks out bits 7-9 (the optimization tier): ours & ~0x380.
//  * fields TraceEvent decoded from the file's metadata: same names in the same order and equal
//    values, except
//      - a field TraceEvent lists with a null value and ours lacks is skipped (TraceEvent's CLR
//        parsers list fields of later event versions and return null for them);
//      - integers are equal when they are the same bit pattern (mod 2^64, or mod 2^32 when both fit
//        in 32 bits): TraceEvent's built-in parsers sometimes type a manifest UInt32 as int;
//      - a Single compares as a float, a Double as a double (bit-exact; NaN equals "NaN");
//      - TraceEvent turns a Char array into a string: ours as an array of one-char strings equals
//        TraceEvent's string when the characters agree;
//      - a byte array is ours' hex string vs TraceEvent's byte[] as hex.
//  * fields that mantra took from a manifest (field_source "manifest"; ours lines without the key
//    are treated as before):
//      - ours {} while TraceEvent shows a non-null field is a difference (the manifest's template
//        has no fields where TraceEvent knows some);
//      - TraceEvent has no parser for the event and the file's metadata has no fields (TraceEvent
//        shows {} from DynamicTraceEventData, e.g. DotNETRuntime 200/201 Increase/DecreaseMemoryPressure,
//        unknown to TraceEvent 4.0.0): ours is not compared, counted as "not decoded by TraceEvent";
//      - by name as for built-in parsers, with two per-event exceptions where TraceEvent's CLR parser
//        does not show the manifest's raw values: GCPerHeapHistory (DotNETRuntime 204)
//        CompactMechanisms/ExpandMechanisms (TraceEvent converts the runtime's mechanism encoding
//        into its own enum values: not compared) and MethodDetails (DotNETRuntime 72)
//        TypeParameterCount, LoaderModuleID, TypeParameters (TraceEvent's parser is one field off:
//        TypeParameterCount null, LoaderModuleID = our TypeParameterCount, TypeParameters = our
//        LoaderModuleID - checked as exactly that, counted).
//      - JitInstrumentationDataVerbose (DotNETRuntime 298): TraceEvent 4.0.0's parser reads
//        MethodToken and MethodNamespace 2 bytes early (its offsets skip MethodFlags' 4 bytes as 2),
//        for the runtime's own events too. Those two fields are checked against what reading the
//        payload 2 bytes early gives - MethodToken = (ModuleID >> 48) | (our token << 16) mod 2^32,
//        MethodNamespace = the char (our token >> 16) then our namespace - and counted as
//        "298 fields read 2 bytes early by TraceEvent", never silently.
//      - GCDynamicEvent (DotNETRuntime 39) named CommittedUsage: TraceEvent dispatches it as event
//        65524 with fields read from Data; its Version and five UInt64 must equal our Data bytes
//        (counted).
//      - MethodFlags: compared without bits 7-9 (TraceEvent's OptimizationTier), counted when
//        those bits are set; MethodDetails (72) fields above counted.
//      - a manifest event whose trace metadata (dynamic, TraceEvent) describes only leading
//        fields (mantra's partial metadata): those fields compared, counted.
//  * ours "decode_error":"short" (the payload ends inside the metadata's fields, e.g. a
//    TraceLogging bool described as 4 bytes and written as 1): TraceEvent reads past the end; the
//    fields we decoded are compared with TraceEvent's first ones, counted.
//  * names: compared where TraceEvent's metadata has one; a name only our manifest gives (the
//    runtime providers') is not.
//  * stack: equal address lists, except that TraceEvent discards the stacks of every
//    Microsoft-Windows-DotNETRuntimeRundown event and of Microsoft-Windows-DotNETRuntime events
//    140-144 and 190 (method load/unload bookkeeping): there an empty TraceEvent stack is accepted.
//  * a truncated trace: TraceEvent throws at the damaged block and never dispatches the events it
//    still had queued for sorting; when it stopped early, extra events at the end of ours are noted,
//    not counted (the common prefix is compared as usual).
//  * order: by default event i of ours is paired with event i of TraceEvent (TraceEvent dispatches
//    in time order, so compare against `mantra dump --json --sorted`); --any-order sorts both sides
//    by (timestamp, thread, provider, id, version) first, ties kept in their order.
using System.Globalization;
using System.Numerics;
using System.Text;

namespace Mantra.Interop;

public sealed class Comparer
{
    public int MaxShown = 20;
    public bool Stacks = true;
    public bool AnyOrder;
    public int Differences;
    public long Events;
    /// <summary>Events whose fields came from a manifest (ours): compared field by field, and not
    /// decodable by TraceEvent (no parser, no metadata fields).</summary>
    public long ManifestCompared, ManifestNotDecodedByTe;
    // manifest events whose trace metadata describes only leading fields (mantra's partial metadata,
    // before a counted array, binary, struct or UTF-8 string): TraceEvent shows those fields only;
    // they are compared, the rest (which only the manifest describes) is counted here
    public long ManifestPrefixByTe;
    static long _shifted298; // 298 events whose MethodToken/MethodNamespace matched TraceEvent's early read
    static long _gcDynamic;  // GCDynamicEvent (39) shown by TraceEvent as its own event (CommittedUsage)
    static long _methodDetails; // MethodDetails (72) events with fields TraceEvent reads at other offsets
    static long _methodFlags;   // events whose MethodFlags TraceEvent shows without the tier bits
    static long _shortPayload;  // events whose payload ends before their metadata's fields do (ours: decode_error)
    readonly TextWriter _out;

    public Comparer(TextWriter output) { _out = output; }

    public int Run(string trace, string ours)
    {
        List<EventLine> mine;
        try { mine = ReadOurs(ours); }
        catch (Exception ex) when (ex is FormatException or IOException or System.Text.Json.JsonException)
        {
            Console.Error.WriteLine($"TraceEventDump compare: {ours}: {ex.Message}");
            return 1;
        }

        var te = new List<(EventLine e, int opcode)>();
        bool stoppedEarly = false;
        int next = 0;
        using (var view = new TeView(trace, (e, d) =>
        {
            if (AnyOrder) { te.Add((e, (int)d.Opcode)); return; }
            e.Line = ++next;
            if (next <= mine.Count) Check(mine[next - 1], e, (int)d.Opcode);
        }))
        {
            if (!view.Process())
            {
                stoppedEarly = true;
                _out.WriteLine($"note: TraceEvent stopped early: {view.Error}");
            }
            Events = view.Count;
        }

        if (AnyOrder)
        {
            var a = te.Select((x, i) => { x.e.Line = i + 1; return x; }).OrderBy(x => x.e, KeyOrder.Instance).ToList();
            var b = mine.OrderBy(x => x, KeyOrder.Instance).ToList();
            for (int i = 0; i < Math.Min(a.Count, b.Count); i++) Check(b[i], a[i].e, a[i].opcode);
        }

        if (stoppedEarly && mine.Count > Events)
            _out.WriteLine($"note: ours has {mine.Count - Events} more events than TraceEvent dispatched before it stopped (not counted)");
        else if (Events != mine.Count)
        {
            Differences++;
            _out.WriteLine($"count: ours {mine.Count} events, traceevent {Events}");
        }
        if (ManifestCompared + ManifestNotDecodedByTe > 0)
            _out.WriteLine($"manifest: {ManifestCompared} events with fields from a manifest compared, " +
                           $"{ManifestNotDecodedByTe} not decoded by TraceEvent");
        if (ManifestPrefixByTe > 0)
            _out.WriteLine($"note: {ManifestPrefixByTe} manifest events of which TraceEvent decodes only the fields " +
                           "their trace metadata describes (compared); the rest only the manifest describes");
        if (_shifted298 > 0)
            _out.WriteLine($"note: {_shifted298} JitInstrumentationDataVerbose events: MethodToken and MethodNamespace " +
                           "checked against TraceEvent's reading 2 bytes early (its parser's offsets)");
        if (_gcDynamic > 0)
            _out.WriteLine($"note: {_gcDynamic} GCDynamicEvent events shown by TraceEvent as event {GcDynamicCommittedUsageId} " +
                           "(CommittedUsage): its fields checked against our Data bytes");
        if (_methodDetails > 0)
            _out.WriteLine($"note: {_methodDetails} MethodDetails events: TypeParameterCount, LoaderModuleID, TypeParameters " +
                           "checked against TraceEvent's reading one field off (TypeParameterCount null, LoaderModuleID = " +
                           "our TypeParameterCount, TypeParameters = our LoaderModuleID)");
        if (_shortPayload > 0)
            _out.WriteLine($"note: {_shortPayload} events whose payload ends inside their metadata's fields (ours: " +
                           "decode_error short): the fields decoded before the end compared, TraceEvent reads past them");
        if (_methodFlags > 0)
            _out.WriteLine($"note: {_methodFlags} events: MethodFlags compared without bits 7-9 (TraceEvent's OptimizationTier)");
        _out.WriteLine($"compare: {Events} events, {Differences} differences");
        return Differences == 0 ? 0 : 1;
    }

    static List<EventLine> ReadOurs(string path)
    {
        var list = new List<EventLine>();
        int n = 0;
        using var r = path == "-" ? new StreamReader(Console.OpenStandardInput()) : new StreamReader(path);
        string? line;
        while ((line = r.ReadLine()) != null)
        {
            n++;
            if (line.Length == 0) continue;
            try { list.Add(Json.ParseEvent(line, n)); }
            catch (Exception ex) when (ex is FormatException or InvalidOperationException or System.Text.Json.JsonException)
            {
                throw new FormatException($"line {n}: {ex.Message}");
            }
        }
        return list;
    }

    // TraceEvent 4.0.0 dispatches GCDynamicEvent (DotNETRuntime 39) named "CommittedUsage" as an
    // event of its own (id 65524) whose fields it reads from the Data bytes: Version (UInt16), then
    // five UInt64 (dotnet/runtime src/coreclr/gc/gcevents.h, GCDynamicEvent CommittedUsage).
    const long GcDynamicCommittedUsageId = 65524;
    static readonly string[] CommittedUsageFields = { "TotalCommittedInUse", "TotalCommittedInGlobalDecommit",
        "TotalCommittedInFree", "TotalCommittedInGlobalFree", "TotalBookkeepingCommitted" };

    static bool GcDynamicMatches(EventLine ours, EventLine te)
    {
        if (ours.Provider != "Microsoft-Windows-DotNETRuntime" || ours.EventId != 39 ||
            te.EventId != GcDynamicCommittedUsageId || ours.Fields.Get("Name") as string != "CommittedUsage" ||
            ours.Fields.Get("Data") is not string hex || hex.Length != 2 * (2 + 8 * CommittedUsageFields.Length))
            return false;
        byte[] data = Convert.FromHexString(hex);
        if (Int(te.Fields.Get("Version")) is not BigInteger v || v != BitConverter.ToUInt16(data, 0)) return false;
        for (int i = 0; i < CommittedUsageFields.Length; i++)
            if (Int(te.Fields.Get(CommittedUsageFields[i])) is not BigInteger f || f != BitConverter.ToUInt64(data, 2 + 8 * i))
                return false;
        return ours.Timestamp == te.Timestamp && (uint)ours.ThreadId == (uint)te.ThreadId;
    }

    void Check(EventLine ours, EventLine te, int teOpcode)
    {
        if (GcDynamicMatches(ours, te))
        {
            _gcDynamic++;
            return;
        }
        var why = new List<string>();
        if (ours.DecodeError == "short" && !te.BuiltIn)
        {
            // TraceEvent reads what the metadata describes whatever the payload holds (a TraceLogging
            // bool described as 4 bytes and written as 1, dotnet/runtime#119737): compare what we
            // decoded before the payload ended
            _shortPayload++;
            te = new EventLine { Line = te.Line, Timestamp = te.Timestamp, Provider = te.Provider, EventId = te.EventId,
                                 Version = te.Version, ThreadId = te.ThreadId, Name = te.Name, BuiltIn = te.BuiltIn,
                                 Fields = PrefixLike(ours.Fields, te.Fields), Stack = te.Stack,
                                 ActivityId = te.ActivityId, RelatedActivityId = te.RelatedActivityId,
                                 HasActivity = te.HasActivity };
        }
        if (ours.Provider != te.Provider) why.Add($"provider: ours \"{ours.Provider}\", traceevent \"{te.Provider}\"");
        if (ours.EventId != te.EventId) why.Add($"event_id: ours {ours.EventId}, traceevent {te.EventId}");
        if (ours.Version != te.Version) why.Add($"version: ours {ours.Version}, traceevent {te.Version}");
        if (ours.Timestamp != te.Timestamp) why.Add($"timestamp: ours {ours.Timestamp}, traceevent {te.Timestamp}");
        if ((uint)ours.ThreadId != (uint)te.ThreadId) why.Add($"thread_id: ours {ours.ThreadId}, traceevent {te.ThreadId}");
        // Names the trace's metadata gives are compared; a name only mantra's manifest gives (the
        // runtime providers' metadata has none, so TraceEvent's metadata name is "") is not.
        if (ours.Name.Length > 0 && te.Name.Length > 0 && !NameMatches(ours.Name, te.Name, teOpcode))
            why.Add($"name: ours \"{ours.Name}\", traceevent \"{te.Name}\" (opcode {teOpcode})");
        bool manifest = ours.FieldSource == "manifest";
        if (manifest && ours.Fields.Count > 0 && te.Fields.Count == 0 && !te.BuiltIn)
            ManifestNotDecodedByTe++;   // TraceEvent has no template for it
        else if (manifest && !te.BuiltIn && te.Fields.Count > 0 && te.Fields.Count < ours.Fields.Count &&
                 te.Fields.Select(k => k.Key).SequenceEqual(ours.Fields.Take(te.Fields.Count).Select(k => k.Key)))
        {
            ManifestPrefixByTe++;
            var prefix = new JObject();
            foreach (var kv in ours.Fields.Take(te.Fields.Count)) prefix.Add(kv.Key, kv.Value);
            CheckFields(prefix, te.Fields, "", why);
        }
        else if (ours.Fields.Count > 0)
        {
            if (manifest) ManifestCompared++;
            if (te.BuiltIn) CheckBuiltInFields(ours.Fields, te.Fields, why, te.Provider, te.EventId);
            else CheckFields(ours.Fields, te.Fields, "", why);
        }
        else if (manifest && te.Fields.Any(kv => kv.Value != null))
        {
            why.Add($"fields: ours none (manifest template without fields), traceevent [{string.Join(",", te.Fields.Select(k => k.Key))}]");
        }
        else if (manifest) ManifestCompared++;
        if (ours.HasActivity && ours.ActivityId != te.ActivityId)
            why.Add($"activity_id: ours {ours.ActivityId}, traceevent {te.ActivityId}");
        if (ours.HasActivity && ours.RelatedActivityId != te.RelatedActivityId)
            why.Add($"related_activity_id: ours {ours.RelatedActivityId}, traceevent {te.RelatedActivityId}");
        if (Stacks && !StackMatches(ours, te))
            why.Add($"stack: ours {ours.Stack.Count} frames, traceevent {te.Stack.Count}" + FirstStackDiff(ours.Stack, te.Stack));
        if (why.Count == 0) return;
        Differences++;
        if (Differences <= MaxShown)
            _out.WriteLine($"ours line {ours.Line}, traceevent event {te.Line} ({te.Provider}/{te.EventId}/v{te.Version} at {te.Timestamp}): " +
                           string.Join("; ", why));
    }

    // te's fields cut to ours' shape: the first ours.Count fields, nested objects likewise.
    static JObject PrefixLike(JObject ours, JObject te)
    {
        var cut = new JObject();
        for (int i = 0; i < Math.Min(ours.Count, te.Count); i++)
            cut.Add(te[i].Key, ours[i].Value is JObject o && te[i].Value is JObject t ? PrefixLike(o, t) : te[i].Value);
        return cut;
    }

    static bool NameMatches(string ours, string te, int opcode) =>
        ours == te || (opcode == 1 && ours == te + "Start") || (opcode == 2 && ours == te + "Stop");

    static bool StackMatches(EventLine ours, EventLine te)
    {
        if (ours.Stack.SequenceEqual(te.Stack)) return true;
        return te.Stack.Count == 0 && TraceEventDropsStack(te.Provider, te.EventId);
    }

    public static bool TraceEventDropsStack(string provider, long id) =>
        provider == "Microsoft-Windows-DotNETRuntimeRundown" ||
        (provider == "Microsoft-Windows-DotNETRuntime" && ((id >= 140 && id <= 144) || id == 190));

    static string FirstStackDiff(List<ulong> a, List<ulong> b)
    {
        for (int i = 0; i < Math.Min(a.Count, b.Count); i++)
            if (a[i] != b[i]) return $", frame {i}: ours 0x{a[i]:x}, traceevent 0x{b[i]:x}";
        return "";
    }

    static void CheckFields(JObject ours, JObject te, string path, List<string> why)
    {
        int i = 0, j = 0;
        while (i < ours.Count || j < te.Count)
        {
            if (i < ours.Count && j < te.Count && ours[i].Key == te[j].Key)
            {
                if (!ValueEquals(ours[i].Value, te[j].Value, path + ours[i].Key, why))
                    why.Add($"field {path}{ours[i].Key}: ours {Show(ours[i].Value)}, traceevent {Show(te[j].Value)}");
                i++; j++;
            }
            else if (j < te.Count && te[j].Value == null && ours.Get(te[j].Key) == null)
                j++;   // TraceEvent lists a field of a later version with value null
            else
            {
                why.Add($"fields{(path.Length > 0 ? " of " + path.TrimEnd('.') : "")}: ours [{string.Join(",", ours.Select(k => k.Key))}], " +
                        $"traceevent [{string.Join(",", te.Select(k => k.Key))}]");
                return;
            }
        }
    }

    // TraceEvent's built-in parsers present the manifest's fields their own way: their own order,
    // reserved fields hidden, derived fields added (OptimizationTier, later versions' fields as null).
    // Fields are matched by name; a field on one side only is not compared, but at least one field
    // must be common; values compare as usual, with BuiltInValueEquals' known presentation rules.
    // Fields of TraceEvent's CLR parsers that do not show the manifest's raw value (see the header).
    static bool NotComparedByName(string provider, long id, string name) =>
        provider == "Microsoft-Windows-DotNETRuntime" &&
        id == 204 && name is "CompactMechanisms" or "ExpandMechanisms";

    // TraceEvent 4.0.0's MethodDetails (72) parser is one field off after MethodToken: it shows
    // TypeParameterCount null, LoaderModuleID = our TypeParameterCount and TypeParameters = our
    // LoaderModuleID. True when its values are exactly that.
    static bool ShiftedMethodDetails(JObject ours, JObject te) =>
        Int(ours.Get("TypeParameterCount")) is BigInteger count && Int(ours.Get("LoaderModuleID")) is BigInteger module &&
        te.FindIndex(t => t.Key == "TypeParameterCount") is int ci && ci >= 0 && te[ci].Value == null &&
        Int(te.Get("LoaderModuleID")) is BigInteger teModule && teModule == count &&
        Int(te.Get("TypeParameters")) is BigInteger teParams && teParams == module;

    // TraceEvent 4.0.0 reads event 298's MethodToken and MethodNamespace 2 bytes early (see the
    // header): true when TraceEvent's values are exactly that early reading of our payload.
    static bool Shifted298(JObject ours, JObject te)
    {
        if (Int(ours.Get("MethodToken")) is not BigInteger tok || Int(ours.Get("ModuleID")) is not BigInteger mod ||
            ours.Get("MethodNamespace") is not string ns)
            return false;
        int ti = te.FindIndex(t => t.Key == "MethodToken"), ni = te.FindIndex(t => t.Key == "MethodNamespace");
        if (ti < 0 || ni < 0 || Int(te[ti].Value) is not BigInteger tt || te[ni].Value is not string tns)
            return false;
        BigInteger early = ((mod >> 48) & 0xFFFF) | ((tok & 0xFFFF) << 16);
        char hi = (char)(int)((tok >> 16) & 0xFFFF);
        string earlyNs = hi == '\0' ? "" : hi + ns;
        return SameBits(early, tt) && tns == earlyNs;
    }

    static void CheckBuiltInFields(JObject ours, JObject te, List<string> why, string provider, long id)
    {
        if (provider == "Microsoft-Windows-DotNETRuntime" && id == 298 && Shifted298(ours, te))
        {
            _shifted298++;
            var rest = new JObject();
            rest.AddRange(ours.Where(k => k.Key is not "MethodToken" and not "MethodNamespace"));
            ours = rest;
        }
        if (provider == "Microsoft-Windows-DotNETRuntime" && id == 72 && ShiftedMethodDetails(ours, te))
        {
            _methodDetails++;
            var rest = new JObject();
            rest.AddRange(ours.Where(k => k.Key is not "TypeParameterCount" and not "LoaderModuleID" and not "TypeParameters"));
            ours = rest;
        }
        int common = 0;
        foreach (var kv in ours)
        {
            int j = te.FindIndex(t => t.Key == kv.Key);
            if (j < 0) continue;
            if (NotComparedByName(provider, id, kv.Key)) { common++; continue; }
            common++;
            object? tv = te[j].Value;
            if (BuiltInValueEquals(kv.Key, kv.Value, tv)) continue;
            if (!ValueEquals(kv.Value, tv, kv.Key, why))
                why.Add($"field {kv.Key}: ours {Show(kv.Value)}, traceevent {Show(tv)}");
        }
        if (common == 0 && te.Count > 0)
            why.Add($"fields: none in common: ours [{string.Join(",", ours.Select(k => k.Key))}], " +
                    $"traceevent [{string.Join(",", te.Select(k => k.Key))}]");
    }

    // Value rules of TraceEvent's CLR parsers:
    //  * MethodFlags (method load/unload/rundown events): bits 7-9 are the optimization tier, which
    //    TraceEvent masks out (flags & ~0x380) and reports as a separate OptimizationTier field.
    static bool BuiltInValueEquals(string name, object? ours, object? te)
    {
        if (name == "MethodFlags" && Int(ours) is BigInteger o && Int(te) is BigInteger t &&
            !SameBits(o, t) && SameBits(o & ~(BigInteger)0x380, t))
        {
            _methodFlags++;
            return true;
        }
        return false;
    }

    static bool ValueEquals(object? a, object? b, string path, List<string> why)
    {
        switch (b)
        {
            case null: return a == null;
            case bool bb: return a is bool ab && ab == bb;
            case long or ulong:
                return Int(a) is BigInteger ai && SameBits(ai, Int(b)!.Value);
            case double d:
                if (double.IsNaN(d) || double.IsInfinity(d)) return a is string s && s == Show(b).Trim('"');
                return Num(a) is double ad && BitConverter.DoubleToInt64Bits(ad) == BitConverter.DoubleToInt64Bits(d)
                       || (Num(a) is double z && z == 0 && d == 0);
            case F32 f:
                if (float.IsNaN(f.Value) || float.IsInfinity(f.Value)) return a is string s2 && s2 == Show(b).Trim('"');
                return Num(a) is double af && (float)af == f.Value;
            case Hex h: return a is string hs && hs == h.Text;
            case string bs:
                if (a is string sa) return sa == bs;
                // TraceEvent turns Char arrays into strings
                if (a is List<object?> chars && chars.All(c => c is string cs && cs.Length is 1 or 2))
                    return string.Concat(chars.Cast<string>()) == bs.TrimEnd('\0') || string.Concat(chars.Cast<string>()) == bs;
                return false;
            case List<object?> lb:
                if (a is not List<object?> la || la.Count != lb.Count) return false;
                for (int k = 0; k < la.Count; k++)
                    if (!ValueEquals(la[k], lb[k], path + "[" + k + "]", why)) return false;
                return true;
            case JObject ob:
                if (a is not JObject oa) return false;
                CheckFields(oa, ob, path + ".", why);   // records its own differences
                return true;
            default: return false;
        }
    }

    static BigInteger? Int(object? v) => v switch
    {
        long l => l,
        ulong u => u,
        _ => null,
    };

    static double? Num(object? v) => v switch
    {
        long l => l,
        ulong u => u,
        double d => d,
        _ => null,
    };

    static readonly BigInteger Two32 = BigInteger.One << 32, Two64 = BigInteger.One << 64;

    static bool SameBits(BigInteger a, BigInteger b)
    {
        if (a == b) return true;
        if (BigInteger.Remainder(a - b, Two64).IsZero) return true;
        bool fits32(BigInteger x) => x >= -(Two32 >> 1) && x < Two32;
        return fits32(a) && fits32(b) && BigInteger.Remainder(a - b, Two32).IsZero;
    }

    static string Show(object? v)
    {
        var sb = new StringBuilder();
        Json.WriteValue(sb, v);
        var s = sb.ToString();
        return s.Length > 200 ? s[..200] + "..." : s;
    }

    sealed class KeyOrder : IComparer<EventLine>
    {
        public static readonly KeyOrder Instance = new();
        public int Compare(EventLine? x, EventLine? y)
        {
            int c = x!.Timestamp.CompareTo(y!.Timestamp);
            if (c == 0) c = ((uint)x.ThreadId).CompareTo((uint)y.ThreadId);
            if (c == 0) c = string.CompareOrdinal(x.Provider, y.Provider);
            if (c == 0) c = x.EventId.CompareTo(y.EventId);
            if (c == 0) c = x.Version.CompareTo(y.Version);
            return c;   // ties keep their order (OrderBy is stable)
        }
    }
}
