// DiagClient - collects a trace through a diagnostic port.
//
//   DiagClient collect PORT OUT SECONDS
//
// PORT "/path.sock,listen" or "/path.sock,connect": through Microsoft.Diagnostics.NETCore.Client
// (DiagnosticsClientConnector: listen waits for the process to connect and advertise itself).
// PORT "HOST:PORT,tcp": over TCP, which that library's public surface cannot reach (its TCP
// transports are internal, for dsrouter), so this program speaks the protocol itself
// (dotnet/diagnostics, documentation/design-docs/ipc-protocol.md): CollectTracing2 on one
// connection, StopTracing on another.
// Both start a session for Mantra-Demo (keywords 0xF, Verbose, no rundown), copy its stream into OUT
// for SECONDS seconds, stop it and wait for the end of the stream. Prints "session ID" and "bytes N"
// and exits 0; 1 with the exception on failure; 2 on bad usage.
using System.Diagnostics.Tracing;
using System.Net.Sockets;
using System.Text;
using Microsoft.Diagnostics.NETCore.Client;

static int Usage()
{
    Console.Error.WriteLine("usage: DiagClient collect PORT OUT SECONDS");
    return 2;
}

// One IPC message: the 20-byte header (magic, size, command set, command id, reserved) and payload.
static byte[] Message(byte set, byte id, byte[] payload)
{
    var m = new MemoryStream();
    var w = new BinaryWriter(m);
    w.Write(Encoding.ASCII.GetBytes("DOTNET_IPC_V1\0"));
    w.Write((ushort)(20 + payload.Length));
    w.Write(set);
    w.Write(id);
    w.Write((ushort)0);
    w.Write(payload);
    return m.ToArray();
}

static void WriteString(BinaryWriter w, string s)
{
    w.Write((uint)(s.Length + 1));
    w.Write(Encoding.Unicode.GetBytes(s + "\0"));
}

// Reads the 20-byte response header and its payload; throws unless it is OK (command id 0).
static byte[] ReadOk(Stream s)
{
    var head = new byte[20];
    s.ReadExactly(head);
    if (Encoding.ASCII.GetString(head, 0, 13) != "DOTNET_IPC_V1")
        throw new InvalidDataException("response without the IPC magic");
    var payload = new byte[BitConverter.ToUInt16(head, 14) - 20];
    s.ReadExactly(payload);
    if (head[17] != 0)
        throw new InvalidDataException($"error response 0x{BitConverter.ToUInt32(payload, 0):X8}");
    return payload;
}

static async Task<long> CollectTcp(string host, int port, string output, int seconds)
{
    var req = new MemoryStream();
    var w = new BinaryWriter(req);
    w.Write(16u);           // circularBufferMB
    w.Write(1u);            // format: NetTrace
    w.Write(false);         // requestRundown
    w.Write(1u);            // one provider
    w.Write(0xFUL);         // keywords
    w.Write(5u);            // level: Verbose
    WriteString(w, "Mantra-Demo");
    w.Write(0u);            // no arguments
    using var tcp = new TcpClient();
    await tcp.ConnectAsync(host, port);
    var stream = tcp.GetStream();
    stream.Write(Message(0x02, 0x03, req.ToArray()));
    ulong id = BitConverter.ToUInt64(ReadOk(stream));
    Console.WriteLine($"session {id}");
    await using var file = File.Create(output);
    var copy = stream.CopyToAsync(file);
    await Task.Delay(TimeSpan.FromSeconds(seconds));
    using (var stop = new TcpClient())
    {
        await stop.ConnectAsync(host, port);
        var ss = stop.GetStream();
        ss.Write(Message(0x02, 0x01, BitConverter.GetBytes(id)));
        if (BitConverter.ToUInt64(ReadOk(ss)) != id)
            throw new InvalidDataException("StopTracing answered with another session id");
    }
    await copy;
    return file.Length;
}

static async Task<long> CollectClient(string port, string output, int seconds)
{
    using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(30));
    await using var connector = await DiagnosticsClientConnector.FromDiagnosticPort(port, cts.Token);
    var client = connector.Instance;
    using var session = client.StartEventPipeSession(new EventPipeProvider("Mantra-Demo", EventLevel.Verbose, 0xF),
                                                     requestRundown: false);
    try
    {
        client.ResumeRuntime();
    }
    catch (UnsupportedCommandException)
    {
    }
    await using var file = File.Create(output);
    var copy = session.EventStream.CopyToAsync(file);
    await Task.Delay(TimeSpan.FromSeconds(seconds));
    session.Stop();
    await copy;
    return file.Length;
}

if (args.Length != 4 || args[0] != "collect" || !int.TryParse(args[3], out int seconds))
    return Usage();
try
{
    long bytes;
    if (args[1].EndsWith(",tcp"))
    {
        string addr = args[1][..^4];
        int colon = addr.LastIndexOf(':');
        bytes = await CollectTcp(addr[..colon], int.Parse(addr[(colon + 1)..]), args[2], seconds);
    }
    else
    {
        bytes = await CollectClient(args[1], args[2], seconds);
    }
    Console.WriteLine($"bytes {bytes}");
    return 0;
}
catch (Exception e)
{
    Console.Error.WriteLine($"DiagClient: {e}");
    return 1;
}
