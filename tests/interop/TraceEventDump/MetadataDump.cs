// MetadataDump - an assembly as System.Reflection.Metadata reads it, in the text form of
// tests/ecma/md_dump.c (libmantra's reader), so that the two compare line for line.
using System.Reflection.Metadata;
using System.Reflection.Metadata.Ecma335;
using System.Reflection.PortableExecutable;
using System.Text;

namespace Mantra.Interop;

static class MetadataDump
{
    public static int Run(string path, TextWriter o)
    {
        using var stream = File.OpenRead(path);
        using var pe = new PEReader(stream);
        var h = pe.PEHeaders;
        var cor = h.CorHeader!;
        o.Write($"pe machine=0x{(ushort)h.CoffHeader.Machine:x4} pe32plus={(h.IsCoffOnly ? 0 : h.PEHeader!.Magic == PEMagic.PE32Plus ? 1 : 0)} ");
        o.Write($"sections={h.SectionHeaders.Length} cli={cor.MajorRuntimeVersion}.{cor.MinorRuntimeVersion} flags=0x{(uint)cor.Flags:x} ");
        o.Write($"entry=0x{cor.EntryPointTokenOrRelativeVirtualAddress:x8} metadata=0x{cor.MetadataDirectory.RelativeVirtualAddress:x}/{cor.MetadataDirectory.Size} ");
        o.Write($"native=0x{cor.ManagedNativeHeaderDirectory.RelativeVirtualAddress:x}/{cor.ManagedNativeHeaderDirectory.Size}\n");
        foreach (var s in h.SectionHeaders)
            o.Write($"section {s.Name} va=0x{s.VirtualAddress:x} vsize=0x{s.VirtualSize:x} raw=0x{s.PointerToRawData:x}/0x{s.SizeOfRawData:x}\n");
        var md = pe.GetMetadataReader();
        o.Write($"metadata version={md.MetadataVersion}\n");
        for (int t = 0; t <= (int)TableIndex.GenericParamConstraint; t++)
        {
            int n = md.GetTableRowCount((TableIndex)t);
            if (n > 0) o.Write($"rows 0x{t:x2}={n}\n");
        }
        string Str(StringHandle s) => md.GetString(s);
        string Hex(BlobHandle b) => Convert.ToHexString(md.GetBlobBytes(b)).ToLowerInvariant();
        string Tok(EntityHandle e) => $"0x{(e.IsNil ? 0 : MetadataTokens.GetToken(e)):x8}";
        string Full(EntityHandle e)
        {
            if (e.Kind == HandleKind.TypeDefinition)
            {
                var d = md.GetTypeDefinition((TypeDefinitionHandle)e);
                string own = (md.GetString(d.Namespace).Length > 0 ? md.GetString(d.Namespace) + "." : "") + md.GetString(d.Name);
                var outer = d.GetDeclaringType();
                return outer.IsNil ? own : Full(outer) + "+" + own;
            }
            var r = md.GetTypeReference((TypeReferenceHandle)e);
            string rown = (md.GetString(r.Namespace).Length > 0 ? md.GetString(r.Namespace) + "." : "") + md.GetString(r.Name);
            return r.ResolutionScope.Kind == HandleKind.TypeReference ? Full((EntityHandle)r.ResolutionScope) + "+" + rown : rown;
        }
        int Rows(TableIndex t) => md.GetTableRowCount(t);

        if (Rows(TableIndex.Module) > 0)
        {
            var m = md.GetModuleDefinition();
            o.Write($"Module 1: name={Str(m.Name)} mvid={md.GetGuid(m.Mvid)}\n");
        }
        for (int r = 1; r <= Rows(TableIndex.TypeRef); r++)
        {
            var hdl = MetadataTokens.TypeReferenceHandle(r);
            var t = md.GetTypeReference(hdl);
            o.Write($"TypeRef {r}: scope={Tok((EntityHandle)t.ResolutionScope)} ns={Str(t.Namespace)} name={Str(t.Name)} full={Full(hdl)}\n");
        }
        for (int r = 1; r <= Rows(TableIndex.TypeDef); r++)
        {
            var hdl = MetadataTokens.TypeDefinitionHandle(r);
            var t = md.GetTypeDefinition(hdl);
            o.Write($"TypeDef {r}: flags=0x{(uint)t.Attributes:x} ns={Str(t.Namespace)} name={Str(t.Name)} extends={Tok(t.BaseType)} enclosing={Tok(t.GetDeclaringType())} full={Full(hdl)}\n");
        }
        for (int r = 1; r <= Rows(TableIndex.MethodDef); r++)
        {
            var m = md.GetMethodDefinition(MetadataTokens.MethodDefinitionHandle(r));
            o.Write($"MethodDef {r}: rva=0x{m.RelativeVirtualAddress:x} impl=0x{(uint)m.ImplAttributes:x} flags=0x{(uint)m.Attributes:x} name={Str(m.Name)} sig={Hex(m.Signature)} owner={Tok(m.GetDeclaringType())}\n");
        }
        for (int r = 1; r <= Rows(TableIndex.Field); r++)
        {
            var f = md.GetFieldDefinition(MetadataTokens.FieldDefinitionHandle(r));
            o.Write($"Field {r}: flags=0x{(uint)f.Attributes:x} name={Str(f.Name)} sig={Hex(f.Signature)}\n");
        }
        for (int r = 1; r <= Rows(TableIndex.Param); r++)
        {
            var p = md.GetParameter(MetadataTokens.ParameterHandle(r));
            o.Write($"Param {r}: flags=0x{(uint)p.Attributes:x} seq={p.SequenceNumber} name={Str(p.Name)}\n");
        }
        for (int r = 1; r <= Rows(TableIndex.InterfaceImpl); r++)
        {
            var i = md.GetInterfaceImplementation(MetadataTokens.InterfaceImplementationHandle(r));
            o.Write($"InterfaceImpl {r}: interface={Tok(i.Interface)}\n");
        }
        for (int r = 1; r <= Rows(TableIndex.MemberRef); r++)
        {
            var m = md.GetMemberReference(MetadataTokens.MemberReferenceHandle(r));
            o.Write($"MemberRef {r}: parent={Tok(m.Parent)} name={Str(m.Name)} sig={Hex(m.Signature)}\n");
        }
        for (int r = 1; r <= Rows(TableIndex.CustomAttribute); r++)
        {
            var c = md.GetCustomAttribute(MetadataTokens.CustomAttributeHandle(r));
            o.Write($"CustomAttribute {r}: parent={Tok(c.Parent)} ctor={Tok(c.Constructor)} value={Hex(c.Value)}\n");
        }
        for (int r = 1; r <= Rows(TableIndex.StandAloneSig); r++)
        {
            var s = md.GetStandaloneSignature(MetadataTokens.StandaloneSignatureHandle(r));
            o.Write($"StandAloneSig {r}: sig={Hex(s.Signature)}\n");
        }
        for (int r = 1; r <= Rows(TableIndex.ModuleRef); r++)
            o.Write($"ModuleRef {r}: name={Str(md.GetModuleReference(MetadataTokens.ModuleReferenceHandle(r)).Name)}\n");
        for (int r = 1; r <= Rows(TableIndex.TypeSpec); r++)
            o.Write($"TypeSpec {r}: sig={Hex(md.GetTypeSpecification(MetadataTokens.TypeSpecificationHandle(r)).Signature)}\n");
        if (Rows(TableIndex.Assembly) > 0)
        {
            var a = md.GetAssemblyDefinition();
            o.Write($"Assembly 1: name={Str(a.Name)} version={a.Version} flags=0x{(uint)a.Flags:x} culture={Str(a.Culture)} hashalg=0x{(uint)a.HashAlgorithm:x} key={Hex(a.PublicKey)}\n");
        }
        for (int r = 1; r <= Rows(TableIndex.AssemblyRef); r++)
        {
            var a = md.GetAssemblyReference(MetadataTokens.AssemblyReferenceHandle(r));
            o.Write($"AssemblyRef {r}: name={Str(a.Name)} version={a.Version} flags=0x{(uint)a.Flags:x} culture={Str(a.Culture)} key={Hex(a.PublicKeyOrToken)} hash={Hex(a.HashValue)}\n");
        }
        for (int r = 1; r <= Rows(TableIndex.ExportedType); r++)
        {
            var e = md.GetExportedType(MetadataTokens.ExportedTypeHandle(r));
            o.Write($"ExportedType {r}: flags=0x{(uint)e.Attributes:x} typedef=0x{e.GetTypeDefinitionId():x} ns={Str(e.Namespace)} name={Str(e.Name)} impl={Tok(e.Implementation)}\n");
        }
        for (int r = 1; r <= Rows(TableIndex.GenericParam); r++)
        {
            var g = md.GetGenericParameter(MetadataTokens.GenericParameterHandle(r));
            o.Write($"GenericParam {r}: number={g.Index} flags=0x{(uint)g.Attributes:x} owner={Tok(g.Parent)} name={Str(g.Name)}\n");
        }
        for (int r = 1; r <= Rows(TableIndex.MethodSpec); r++)
        {
            var s = md.GetMethodSpecification(MetadataTokens.MethodSpecificationHandle(r));
            o.Write($"MethodSpec {r}: method={Tok(s.Method)} inst={Hex(s.Signature)}\n");
        }
        for (int r = 1; r <= Rows(TableIndex.GenericParamConstraint); r++)
        {
            var c = md.GetGenericParameterConstraint(MetadataTokens.GenericParameterConstraintHandle(r));
            o.Write($"GenericParamConstraint {r}: owner={Tok(c.Parameter)} constraint={Tok(c.Type)}\n");
        }
        return 0;
    }
}
