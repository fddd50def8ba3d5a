/*
 * The layout of a SPIR-V module's push-constant block (its size, its
 * members' offsets and sizes), read from the module itself, so that a
 * pipeline whose C struct and GLSL block disagree is refused when it is
 * made instead of reading shifted fields (a silently wrong score).  Only
 * what push-constant blocks use is understood: integer and float scalars,
 * vectors, arrays with an ArrayStride, and structs with member Offsets.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "spirv_reflect.h"

enum {
    OP_DECORATE = 71,
    OP_MEMBER_DECORATE = 72,
    OP_TYPE_INT = 21,
    OP_TYPE_FLOAT = 22,
    OP_TYPE_VECTOR = 23,
    OP_TYPE_ARRAY = 28,
    OP_TYPE_STRUCT = 30,
    OP_TYPE_POINTER = 32,
    OP_CONSTANT = 43,
    OP_VARIABLE = 59,
    DECORATION_ARRAY_STRIDE = 6,
    DECORATION_OFFSET = 35,
    STORAGE_PUSH_CONSTANT = 9,
    MAX_DEPTH = 8,
};

typedef struct Module {
    const uint32_t *words;
    size_t count;
} Module;

/* The first instruction with opcode op whose word `at` is id (0: none). */
static const uint32_t *find(const Module *m, unsigned op, unsigned at, uint32_t id)
{
    for (size_t i = 5; i < m->count;) {
        const uint32_t n = m->words[i] >> 16;
        if (n == 0 || i + n > m->count) return NULL;
        if ((m->words[i] & 0xffff) == op && at < n && m->words[i + at] == id) return &m->words[i];
        i += n;
    }
    return NULL;
}

/* A decoration's value on id (or on member `member` of it), or -1. */
static int64_t decoration(const Module *m, uint32_t id, int member, uint32_t what)
{
    for (size_t i = 5; i < m->count;) {
        const uint32_t n = m->words[i] >> 16, op = m->words[i] & 0xffff;
        if (n == 0 || i + n > m->count) return -1;
        const uint32_t *w = &m->words[i];
        if (member < 0 && op == OP_DECORATE && n >= 4 && w[1] == id && w[2] == what) return w[3];
        if (member >= 0 && op == OP_MEMBER_DECORATE && n >= 5 && w[1] == id &&
            w[2] == (uint32_t)member && w[3] == what)
            return w[4];
        i += n;
    }
    return -1;
}

/* Bytes a value of type id spans in the block, or -1 where unknown. */
static int64_t type_size(const Module *m, uint32_t id, unsigned depth)
{
    if (depth > MAX_DEPTH) return -1;
    const uint32_t *w;
    if ((w = find(m, OP_TYPE_INT, 1, id)) || (w = find(m, OP_TYPE_FLOAT, 1, id))) return w[2] / 8;
    if ((w = find(m, OP_TYPE_VECTOR, 1, id))) {
        const int64_t c = type_size(m, w[2], depth + 1);
        return c < 0 ? -1 : c * w[3];
    }
    if ((w = find(m, OP_TYPE_ARRAY, 1, id))) {
        const uint32_t *length = find(m, OP_CONSTANT, 2, w[3]);
        const int64_t stride = decoration(m, id, -1, DECORATION_ARRAY_STRIDE);
        return !length || stride < 0 ? -1 : stride * (int64_t)length[3];
    }
    if ((w = find(m, OP_TYPE_STRUCT, 1, id))) {
        const unsigned members = (w[0] >> 16) - 2;
        int64_t end = 0;
        for (unsigned k = 0; k < members; k++) {
            const int64_t offset = decoration(m, id, (int)k, DECORATION_OFFSET);
            const int64_t size = type_size(m, w[2 + k], depth + 1);
            if (offset < 0 || size < 0) return -1;
            if (offset + size > end) end = offset + size;
        }
        return end;
    }
    return -1;
}

/* The struct type of the module's push-constant block: 0, 1 (none), -1. */
static int push_block(const Module *m, uint32_t *type)
{
    if (m->count < 5 || m->words[0] != 0x07230203u) return -1;
    for (size_t i = 5; i < m->count;) {
        const uint32_t n = m->words[i] >> 16;
        if (n == 0 || i + n > m->count) return -1;
        if ((m->words[i] & 0xffff) == OP_VARIABLE && n >= 4 &&
            m->words[i + 3] == STORAGE_PUSH_CONSTANT) {
            const uint32_t *pointer = find(m, OP_TYPE_POINTER, 1, m->words[i + 1]);
            if (!pointer) return -1;
            *type = pointer[3];
            return 0;
        }
        i += n;
    }
    return 1;
}

int spirv_push_constant_size(const uint32_t *words, size_t bytes, uint32_t *size)
{
    const Module m = { words, bytes / 4 };
    uint32_t type;
    const int found = push_block(&m, &type);
    if (found) return found;
    const int64_t s = type_size(&m, type, 0);
    if (s < 0 || s > UINT32_MAX) return -1;
    *size = (uint32_t)s;
    return 0;
}

int spirv_push_constant_members(const uint32_t *words, size_t bytes, SpirvMember *members,
                                unsigned max, unsigned *count)
{
    const Module m = { words, bytes / 4 };
    uint32_t type;
    const int found = push_block(&m, &type);
    if (found) return found;
    const uint32_t *w = find(&m, OP_TYPE_STRUCT, 1, type);
    if (!w) return -1;
    const unsigned n = (w[0] >> 16) - 2;
    for (unsigned k = 0; k < n; k++) {
        const int64_t offset = decoration(&m, type, (int)k, DECORATION_OFFSET);
        const int64_t size = type_size(&m, w[2 + k], 1);
        if (offset < 0 || size < 0 || offset > UINT32_MAX || size > UINT32_MAX) return -1;
        if (k < max)
            members[k] = (SpirvMember){ (uint32_t)offset, (uint32_t)size,
                                        find(&m, OP_TYPE_STRUCT, 1, w[2 + k]) != NULL };
    }
    *count = n;
    return 0;
}
