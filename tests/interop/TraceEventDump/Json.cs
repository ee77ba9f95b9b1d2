// Json.cs - the value model shared by `dump` (TraceEvent side) and `compare` (our side), an exact
// JSON Lines writer in the shape of docs/dump-json.md, and a reader for our tool's lines.
//
// Values are plain .NET objects:
//   null, bool, string, long, ulong, double, F32 (a Single, kept apart so it prints and compares as
//   a float), Hex (a byte array printed as lower-case hex), List<object?> (array),
//   JObject (ordered name -> value pairs).
using System.Globalization;
using System.Text;
using System.Text.Json;

namespace Mantra.Interop;

/// <summary>A Single value (prints with "R" precision of a float, compares as a float).</summary>
public readonly record struct F32(float Value);

/// <summary>Bytes printed as a lower-case hex string (docs/dump-json.md: arrays of bytes).</summary>
public sealed record Hex(string Text);

/// <summary>An ordered JSON object.</summary>
public sealed class JObject : List<KeyValuePair<string, object?>>
{
    public void Add(string name, object? value) => Add(new KeyValuePair<string, object?>(name, value));

    public object? Get(string name)
    {
        foreach (var kv in this)
            if (kv.Key == name) return kv.Value;
        return null;
    }
}

/// <summary>One event in the docs/dump-json.md shape.</summary>
public sealed class EventLine
{
    public long Timestamp;
    public string Provider = "";
    public long EventId;
    public long Version;
    public string Name = "";
    public long ThreadId;
    public long Sequence;
    public JObject Fields = new();
    public List<ulong> Stack = new();
    /// <summary>The row header's ActivityID and RelatedActivityID (TraceEvent.ActivityID /
    /// RelatedActivityID); ours: HasActivity when the line has the keys.</summary>
    public Guid ActivityId, RelatedActivityId;
    public bool HasActivity;
    /// <summary>1-based line number in the file it came from (compare only).</summary>
    public int Line;
    /// <summary>TraceEvent decoded the payload with a built-in parser (CLR, rundown, private, sample
    /// profiler), not from the file's metadata (compare only, not printed).</summary>
    public bool BuiltIn;
    /// <summary>Ours only: where mantra took the field names from ("metadata", "manifest", "none"; "" when
    /// the line has no "field_source" key). The "maps" key of ours is read by nobody.</summary>
    public string FieldSource = "";
    /// <summary>mantra's "decode_error" ("short", "trailing", "bad_string"), "" when absent.</summary>
    public string DecodeError = "";
}

public static class Json
{
    // ---- writing ------------------------------------------------------------------------------

    public static void WriteEvent(StringBuilder sb, EventLine e)
    {
        sb.Append("{\"timestamp\":").Append(e.Timestamp.ToString(CultureInfo.InvariantCulture));
        sb.Append(",\"provider\":"); WriteString(sb, e.Provider);
        sb.Append(",\"event_id\":").Append(e.EventId.ToString(CultureInfo.InvariantCulture));
        sb.Append(",\"version\":").Append(e.Version.ToString(CultureInfo.InvariantCulture));
        sb.Append(",\"name\":"); WriteString(sb, e.Name);
        sb.Append(",\"thread_id\":").Append(e.ThreadId.ToString(CultureInfo.InvariantCulture));
        sb.Append(",\"sequence\":").Append(e.Sequence.ToString(CultureInfo.InvariantCulture));
        sb.Append(",\"fields\":"); WriteValue(sb, e.Fields);
        sb.Append(",\"stack\":[");
        for (int i = 0; i < e.Stack.Count; i++)
        {
            if (i > 0) sb.Append(',');
            sb.Append("\"0x").Append(e.Stack[i].ToString("x", CultureInfo.InvariantCulture)).Append('"');
        }
        sb.Append("],\"activity_id\":\"").Append(e.ActivityId.ToString("D"));
        sb.Append("\",\"related_activity_id\":\"").Append(e.RelatedActivityId.ToString("D")).Append("\"}");
    }

    public static void WriteValue(StringBuilder sb, object? v)
    {
        switch (v)
        {
            case null: sb.Append("null"); break;
            case bool b: sb.Append(b ? "true" : "false"); break;
            case string s: WriteString(sb, s); break;
            case long l: sb.Append(l.ToString(CultureInfo.InvariantCulture)); break;
            case ulong u: sb.Append(u.ToString(CultureInfo.InvariantCulture)); break;
            case double d: WriteDouble(sb, d); break;
            case F32 f: WriteSingle(sb, f.Value); break;
            case Hex h: WriteString(sb, h.Text); break;
            case JObject o:
                sb.Append('{');
                for (int i = 0; i < o.Count; i++)
                {
                    if (i > 0) sb.Append(',');
                    WriteString(sb, o[i].Key);
                    sb.Append(':');
                    WriteValue(sb, o[i].Value);
                }
                sb.Append('}');
                break;
            case List<object?> a:
                sb.Append('[');
                for (int i = 0; i < a.Count; i++)
                {
                    if (i > 0) sb.Append(',');
                    WriteValue(sb, a[i]);
                }
                sb.Append(']');
                break;
            default: WriteString(sb, v.ToString() ?? ""); break;
        }
    }

    static void WriteDouble(StringBuilder sb, double d)
    {
        if (double.IsNaN(d)) sb.Append("\"NaN\"");
        else if (double.IsPositiveInfinity(d)) sb.Append("\"Infinity\"");
        else if (double.IsNegativeInfinity(d)) sb.Append("\"-Infinity\"");
        else sb.Append(d.ToString("R", CultureInfo.InvariantCulture));
    }

    static void WriteSingle(StringBuilder sb, float f)
    {
        if (float.IsNaN(f)) sb.Append("\"NaN\"");
        else if (float.IsPositiveInfinity(f)) sb.Append("\"Infinity\"");
        else if (float.IsNegativeInfinity(f)) sb.Append("\"-Infinity\"");
        else sb.Append(f.ToString("R", CultureInfo.InvariantCulture));
    }

    /// <summary>JSON string: escapes " \ and control characters; everything else as UTF-8 (by the
    /// output encoding). Lone surrogates become U+FFFD, as docs/dump-json.md asks.</summary>
    public static void WriteString(StringBuilder sb, string s)
    {
        sb.Append('"');
        for (int i = 0; i < s.Length; i++)
        {
            char c = s[i];
            switch (c)
            {
                case '"': sb.Append("\\\""); break;
                case '\\': sb.Append("\\\\"); break;
                case '\n': sb.Append("\\n"); break;
                case '\r': sb.Append("\\r"); break;
                case '\t': sb.Append("\\t"); break;
                case '\b': sb.Append("\\b"); break;
                case '\f': sb.Append("\\f"); break;
                default:
                    if (c < 0x20)
                        sb.Append("\\u00").Append(((int)c).ToString("x2", CultureInfo.InvariantCulture));
                    else if (char.IsHighSurrogate(c) && i + 1 < s.Length && char.IsLowSurrogate(s[i + 1]))
                    {
                        sb.Append(c).Append(s[i + 1]);
                        i++;
                    }
                    else if (char.IsSurrogate(c))
                        sb.Append('\uFFFD');
                    else
                        sb.Append(c);
                    break;
            }
        }
        sb.Append('"');
    }

    // ---- reading (our tool's lines) ------------------------------------------------------------

    /// <summary>Parses one line of `mantra dump --json`. Throws FormatException on a bad line.</summary>
    public static EventLine ParseEvent(string line, int lineNo)
    {
        using var doc = JsonDocument.Parse(line);
        var r = doc.RootElement;
        if (r.ValueKind != JsonValueKind.Object) throw new FormatException("not a JSON object");
        var e = new EventLine { Line = lineNo };
        e.Timestamp = Req(r, "timestamp").GetInt64();
        e.Provider = Req(r, "provider").GetString() ?? "";
        e.EventId = Req(r, "event_id").GetInt64();
        e.Version = Req(r, "version").GetInt64();
        e.Name = Req(r, "name").GetString() ?? "";
        e.ThreadId = ReqInteger(r, "thread_id");
        e.Sequence = ReqInteger(r, "sequence");
        var f = Req(r, "fields");
        if (f.ValueKind != JsonValueKind.Object) throw new FormatException("\"fields\" is not an object");
        e.Fields = (JObject)FromElement(f)!;
        // mantra-only keys: "field_source" is kept for compare's rules, "maps" (names of map values)
        // is ignored; TraceEvent's own dump prints neither.
        if (r.TryGetProperty("field_source", out var fs) && fs.ValueKind == JsonValueKind.String)
            e.FieldSource = fs.GetString() ?? "";
        if (r.TryGetProperty("activity_id", out var act) && r.TryGetProperty("related_activity_id", out var rel))
        {
            e.ActivityId = Guid.Parse(act.GetString() ?? "");
            e.RelatedActivityId = Guid.Parse(rel.GetString() ?? "");
            e.HasActivity = true;
        }
        if (r.TryGetProperty("decode_error", out var de) && de.ValueKind == JsonValueKind.String)
            e.DecodeError = de.GetString() ?? "";
        foreach (var a in Req(r, "stack").EnumerateArray())
        {
            string s = a.GetString() ?? "";
            if (!s.StartsWith("0x", StringComparison.Ordinal))
                throw new FormatException($"stack entry \"{s}\" does not start with 0x");
            e.Stack.Add(ulong.Parse(s.AsSpan(2), NumberStyles.AllowHexSpecifier, CultureInfo.InvariantCulture));
        }
        return e;
    }

    static JsonElement Req(JsonElement r, string name)
    {
        if (!r.TryGetProperty(name, out var v)) throw new FormatException($"key \"{name}\" missing");
        return v;
    }

    // thread ids and sequence numbers may be unsigned 64-bit in our output: keep the bit pattern.
    static long ReqInteger(JsonElement r, string name)
    {
        var v = Req(r, name);
        if (v.TryGetInt64(out long l)) return l;
        if (v.TryGetUInt64(out ulong u)) return unchecked((long)u);
        throw new FormatException($"\"{name}\" is not an integer");
    }

    public static object? FromElement(JsonElement el)
    {
        switch (el.ValueKind)
        {
            case JsonValueKind.Null: return null;
            case JsonValueKind.True: return true;
            case JsonValueKind.False: return false;
            case JsonValueKind.String: return el.GetString();
            case JsonValueKind.Number:
                if (el.TryGetInt64(out long l)) return l;
                if (el.TryGetUInt64(out ulong u)) return u;
                return el.GetDouble();
            case JsonValueKind.Array:
                var list = new List<object?>();
                foreach (var a in el.EnumerateArray()) list.Add(FromElement(a));
                return list;
            case JsonValueKind.Object:
                var o = new JObject();
                foreach (var p in el.EnumerateObject()) o.Add(p.Name, FromElement(p.Value));
                return o;
            default: throw new FormatException($"unexpected JSON {el.ValueKind}");
        }
    }
}
