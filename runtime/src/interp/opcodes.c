/* opcodes.c - the opcode table (mnemonic, operand kind, stack effect) and instruction sizes. */
#include "interp/interp-internal.h"

const ip_opinfo ip_opinfo_table[IP_OP_COUNT_] = {
#define IP_INFO_(e, s, k, pop, push) {s, (uint8_t)(k), (int8_t)(pop), (int8_t)(push)},
    IP_OPCODES(IP_INFO_)
#undef IP_INFO_
};

uint32_t ip_insn_size(const uint8_t *code, uint32_t avail) {
    if (avail < 1 || code[0] >= IP_OP_COUNT_)
        return 0;
    uint32_t n;
    switch (ip_opinfo_table[code[0]].operand) {
    case IP_OPND_NONE: n = 1; break;
    case IP_OPND_I64:
    case IP_OPND_F64: n = 9; break;
    case IP_OPND_U16: n = 3; break;
    case IP_OPND_SWITCH:
        if (avail < 5)
            return 0;
        {
            uint32_t cnt = ip_load_u32(code + 1);
            if (cnt > (avail - 5) / 4)
                return 0;
            n = 5 + 4 * cnt;
        }
        break;
    case IP_OPND_BR_PROBE: n = 9; break;
    default: n = 5; break; /* BR, CALL, STR, PROBE */
    }
    return n <= avail ? n : 0;
}
