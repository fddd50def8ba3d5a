/*
 * Strict JSON DOM parser.  See json.h for the contract.
 *
 * One pass, recursive descent bounded by the depth limit.  Values live in an
 * arena of large blocks; the children of an array or object are gathered on
 * a growable stack while they are parsed and copied into the arena as one
 * contiguous slice when the container closes, so a document costs one
 * allocation per block, not one per value.
 */
#include "json.h"

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdalign.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- arena -------------------------------------------------------------- */

typedef struct ArenaBlock {
    struct ArenaBlock *next;
    size_t used, size;
    max_align_t data[];
} ArenaBlock;

#define ARENA_BLOCK_SIZE ((size_t)64 * 1024)

struct JsonDocument {
    ArenaBlock *blocks;
    JsonValue root;
};

static void *arena_alloc(JsonDocument *doc, size_t size)
{
    const size_t align = alignof(max_align_t);
    if (size > SIZE_MAX - align) return NULL;
    size = (size + align - 1) & ~(align - 1);
    if (size == 0) size = align;

    ArenaBlock *block = doc->blocks;
    if (!block || block->size - block->used < size) {
        /* Big requests (a long string) get a block of their own, kept behind
         * the current one so its free space stays usable. */
        const size_t want = size > ARENA_BLOCK_SIZE / 4 ? size : ARENA_BLOCK_SIZE;
        if (want > SIZE_MAX - sizeof(ArenaBlock)) return NULL;
        ArenaBlock *fresh = malloc(sizeof(ArenaBlock) + want);
        if (!fresh) return NULL;
        fresh->used = 0;
        fresh->size = want;
        if (block && want != ARENA_BLOCK_SIZE) {
            fresh->next = block->next;
            block->next = fresh;
        } else {
            fresh->next = block;
            doc->blocks = fresh;
        }
        block = fresh;
    }
    void *p = (char *)block->data + block->used;
    block->used += size;
    return p;
}

void json_document_free(JsonDocument **doc)
{
    if (!doc || !*doc) return;
    ArenaBlock *block = (*doc)->blocks;
    while (block) {
        ArenaBlock *next = block->next;
        free(block);
        block = next;
    }
    free(*doc);
    *doc = NULL;
}

const JsonValue *json_document_root(const JsonDocument *doc)
{
    return doc ? &doc->root : NULL;
}

/* ---- parser state ------------------------------------------------------- */

typedef struct Parser {
    const unsigned char *text;
    size_t length;
    size_t pos;
    size_t max_depth;
    size_t max_values;
    size_t value_count;
    JsonDocument *doc;

    /* Children of the containers being parsed, innermost last. */
    JsonValue *items;
    size_t item_count, item_capacity;
    JsonMember *members;
    size_t member_count, member_capacity;

    int status;          /* 0, -EINVAL or -ENOMEM: the first error wins */
    size_t error_offset;
    char message[sizeof(((JsonError *)0)->message)];
} Parser;

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int fail(Parser *p, size_t offset, const char *fmt, ...)
{
    if (p->status) return p->status;
    va_list args;
    va_start(args, fmt);
    vsnprintf(p->message, sizeof(p->message), fmt, args);
    va_end(args);
    p->status = -EINVAL;
    p->error_offset = offset;
    return p->status;
}

static int fail_nomem(Parser *p)
{
    if (p->status) return p->status;
    snprintf(p->message, sizeof(p->message), "out of memory");
    p->status = -ENOMEM;
    p->error_offset = p->pos;
    return p->status;
}

/* Describes the byte at offset for a message: "'x'" or "byte 0x07". */
static const char *describe_at(const Parser *p, size_t offset, char *buf,
                               size_t size)
{
    if (offset >= p->length) return "end of the input";
    const unsigned char c = p->text[offset];
    if (c >= 0x20 && c < 0x7f)
        snprintf(buf, size, "'%c'", c);
    else
        snprintf(buf, size, "byte 0x%02x", c);
    return buf;
}

static int fail_unexpected(Parser *p, size_t offset, const char *expected)
{
    char buf[16];
    if (offset >= p->length)
        return fail(p, offset, "unexpected end of the input, expected %s", expected);
    return fail(p, offset, "unexpected %s, expected %s",
                describe_at(p, offset, buf, sizeof(buf)), expected);
}

static void skip_whitespace(Parser *p)
{
    while (p->pos < p->length) {
        const unsigned char c = p->text[p->pos];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
        p->pos++;
    }
}

static int grow(void **array, size_t *capacity, size_t element_size)
{
    const size_t fresh = *capacity ? *capacity * 2 : 64;
    if (fresh > SIZE_MAX / element_size) return -ENOMEM;
    void *p = realloc(*array, fresh * element_size);
    if (!p) return -ENOMEM;
    *array = p;
    *capacity = fresh;
    return 0;
}

/* ---- strings ------------------------------------------------------------ */

static int hex_value(unsigned char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Reads the 4 hex digits of a \u escape at text[i..i+3], all before end. */
static long read_hex4(const unsigned char *text, size_t i, size_t end)
{
    if (end - i < 4) return -1;
    long v = 0;
    for (size_t k = 0; k < 4; k++) {
        const int h = hex_value(text[i + k]);
        if (h < 0) return -1;
        v = v * 16 + h;
    }
    return v;
}

static size_t put_utf8(unsigned char *out, unsigned long cp)
{
    if (cp < 0x80) {
        out[0] = (unsigned char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (unsigned char)(0xc0 | (cp >> 6));
        out[1] = (unsigned char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (unsigned char)(0xe0 | (cp >> 12));
        out[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
        out[2] = (unsigned char)(0x80 | (cp & 0x3f));
        return 3;
    }
    out[0] = (unsigned char)(0xf0 | (cp >> 18));
    out[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3f));
    out[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
    out[3] = (unsigned char)(0x80 | (cp & 0x3f));
    return 4;
}

/* The length of the valid UTF-8 sequence at text[i] (lead byte >= 0x80),
 * 0 if it is malformed, overlong, a surrogate or beyond U+10FFFF. */
static size_t utf8_sequence(const unsigned char *text, size_t i, size_t end)
{
    const unsigned char c = text[i];
    size_t n;
    unsigned char lo = 0x80, hi = 0xbf; /* range of the second byte */
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        if (c == 0xe0) lo = 0xa0;
        if (c == 0xed) hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        if (c == 0xf0) lo = 0x90;
        if (c == 0xf4) hi = 0x8f;
    } else {
        return 0;
    }
    if (end - i < n) return 0;
    if (text[i + 1] < lo || text[i + 1] > hi) return 0;
    for (size_t k = 2; k < n; k++)
        if (text[i + k] < 0x80 || text[i + k] > 0xbf) return 0;
    return n;
}

/* Parses the string whose opening quote is at p->pos. */
static int parse_string(Parser *p, const char **chars, size_t *length)
{
    const size_t open = p->pos;
    const size_t start = open + 1;

    /* Find the closing quote: a backslash always takes the next byte with
     * it.  The decoder below re-checks every escape within these bounds. */
    size_t end = start;
    while (end < p->length && p->text[end] != '"')
        end += p->text[end] == '\\' ? 2 : 1;
    if (end >= p->length)
        return fail(p, open, "unterminated string");

    /* Decoding never makes a string longer than it is written. */
    unsigned char *out = arena_alloc(p->doc, end - start + 1);
    if (!out) return fail_nomem(p);

    size_t n = 0;
    size_t i = start;
    while (i < end) {
        const unsigned char c = p->text[i];
        if (c < 0x20)
            return fail(p, i, "control character (byte 0x%02x) in a string; "
                        "write it as an escape", c);
        if (c >= 0x80) {
            const size_t len = utf8_sequence(p->text, i, end);
            if (!len) return fail(p, i, "invalid UTF-8 in a string");
            memcpy(out + n, p->text + i, len);
            n += len;
            i += len;
            continue;
        }
        if (c != '\\') {
            out[n++] = c;
            i++;
            continue;
        }
        const size_t escape = i;
        const unsigned char e = p->text[i + 1]; /* i + 1 < end: see above */
        i += 2;
        switch (e) {
        case '"': out[n++] = '"'; break;
        case '\\': out[n++] = '\\'; break;
        case '/': out[n++] = '/'; break;
        case 'b': out[n++] = '\b'; break;
        case 'f': out[n++] = '\f'; break;
        case 'n': out[n++] = '\n'; break;
        case 'r': out[n++] = '\r'; break;
        case 't': out[n++] = '\t'; break;
        case 'u': {
            long cp = read_hex4(p->text, i, end);
            if (cp < 0)
                return fail(p, escape, "invalid \\u escape: expected 4 hex digits");
            i += 4;
            if (cp >= 0xdc00 && cp <= 0xdfff)
                return fail(p, escape, "invalid \\u escape: lone low surrogate");
            if (cp >= 0xd800 && cp <= 0xdbff) {
                long low = -1;
                if (end - i >= 6 && p->text[i] == '\\' && p->text[i + 1] == 'u')
                    low = read_hex4(p->text, i + 2, end);
                if (low < 0xdc00 || low > 0xdfff)
                    return fail(p, escape, "invalid \\u escape: high surrogate "
                                "without a low surrogate after it");
                i += 6;
                cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
            }
            n += put_utf8(out + n, (unsigned long)cp);
            break;
        }
        default: {
            char buf[16];
            return fail(p, escape, "invalid escape \\%s in a string",
                        describe_at(p, escape + 1, buf, sizeof(buf)));
        }
        }
    }
    out[n] = '\0';
    p->pos = end + 1;
    *chars = (const char *)out;
    *length = n;
    return 0;
}

/* ---- numbers ------------------------------------------------------------ */

static int is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

static int parse_number(Parser *p, JsonValue *out)
{
    const size_t start = p->pos;
    size_t i = start;
    const unsigned char *t = p->text;
    const size_t len = p->length;

    if (i < len && t[i] == '-') i++;
    if (i < len && t[i] == '0') {
        i++;
        if (i < len && is_digit(t[i]))
            return fail(p, start, "invalid number: leading zeros are not allowed");
    } else if (i < len && is_digit(t[i])) {
        while (i < len && is_digit(t[i])) i++;
    } else {
        return fail_unexpected(p, i, "a digit");
    }
    if (i < len && t[i] == '.') {
        i++;
        if (i >= len || !is_digit(t[i]))
            return fail_unexpected(p, i, "a digit after the decimal point");
        while (i < len && is_digit(t[i])) i++;
    }
    if (i < len && (t[i] == 'e' || t[i] == 'E')) {
        i++;
        if (i < len && (t[i] == '+' || t[i] == '-')) i++;
        if (i >= len || !is_digit(t[i]))
            return fail_unexpected(p, i, "a digit in the exponent");
        while (i < len && is_digit(t[i])) i++;
    }

    const size_t n = i - start;
    char *text = arena_alloc(p->doc, n + 1);
    if (!text) return fail_nomem(p);
    memcpy(text, t + start, n);
    text[n] = '\0';

    char *end = NULL;
    const double v = json_strtod(text, &end);
    if (end != text + n)
        return fail(p, start, "invalid number");
    /* Underflow rounds to zero or a subnormal, which is the correctly
     * rounded value; overflow has no finite value to give. */
    if (isinf(v))
        return fail(p, start, "number out of range");

    out->type = JSON_NUMBER;
    out->u.number.value = v;
    out->u.number.text = text;
    p->pos = i;
    return 0;
}

/* ---- values ------------------------------------------------------------- */

static int parse_value(Parser *p, JsonValue *out, size_t depth);

static int parse_literal(Parser *p, const char *word, JsonValue *out)
{
    const size_t n = strlen(word);
    if (p->length - p->pos < n || memcmp(p->text + p->pos, word, n))
        return fail_unexpected(p, p->pos, "a value");
    p->pos += n;
    (void)out;
    return 0;
}

/* Consumes c when it is the next character. */
static bool accept(Parser *p, char c)
{
    if (p->pos >= p->length || p->text[p->pos] != c) return false;
    p->pos++;
    return true;
}

/* Steps into an array or an object at its opening bracket: 1 when an
 * element follows, 0 when `close` ends it at once (consumed), or the error
 * of one nested too deep. */
static int open_container(Parser *p, size_t depth, char close)
{
    if (depth > p->max_depth)
        return fail(p, p->pos, "arrays and objects nested deeper than %zu levels",
                    p->max_depth);
    p->pos++; /* '[' or '{' */
    skip_whitespace(p);
    return accept(p, close) ? 0 : 1;
}

/* After an element: 1 on ',' (another follows), 0 on `close` (consumed),
 * else the error that says what was expected. */
static int next_element(Parser *p, char close, const char *expected)
{
    skip_whitespace(p);
    if (accept(p, ',')) return 1;
    if (accept(p, close)) return 0;
    return fail_unexpected(p, p->pos, expected);
}

static int parse_array(Parser *p, JsonValue *out, size_t depth)
{
    const size_t base = p->item_count;
    int more = open_container(p, depth, ']');
    while (more > 0) {
        JsonValue item;
        int err = parse_value(p, &item, depth);
        if (err) return err;
        if (p->item_count == p->item_capacity &&
            grow((void **)&p->items, &p->item_capacity, sizeof(*p->items)))
            return fail_nomem(p);
        p->items[p->item_count++] = item;
        more = next_element(p, ']', "',' or ']' in an array");
    }
    if (more < 0) return more;

    const size_t count = p->item_count - base;
    JsonValue *items = NULL;
    if (count) {
        items = arena_alloc(p->doc, count * sizeof(*items));
        if (!items) return fail_nomem(p);
        memcpy(items, p->items + base, count * sizeof(*items));
    }
    p->item_count = base;
    out->type = JSON_ARRAY;
    out->u.array.items = items;
    out->u.array.count = count;
    return 0;
}

/* Orders keys by length, then bytes: only equality matters. */
static int compare_keys(const void *a, const void *b)
{
    const JsonMember *x = *(const JsonMember *const *)a;
    const JsonMember *y = *(const JsonMember *const *)b;
    if (x->key_length != y->key_length)
        return x->key_length < y->key_length ? -1 : 1;
    const int c = memcmp(x->key, y->key, x->key_length);
    if (c) return c;
    /* Equal keys: document order, so the second one is reported. */
    return x->key_offset < y->key_offset ? -1 : x->key_offset > y->key_offset;
}

static int keys_equal(const JsonMember *a, const JsonMember *b)
{
    return a->key_length == b->key_length &&
           !memcmp(a->key, b->key, a->key_length);
}

/* A key, shortened and with unprintable bytes replaced, for messages. */
static void printable_key(const JsonMember *m, char *buf, size_t size)
{
    const size_t limit = size - 4; /* room for "..." and the NUL */
    size_t n = 0;
    for (size_t i = 0; i < m->key_length; i++) {
        if (n >= limit) {
            memcpy(buf + n, "...", 3);
            n += 3;
            break;
        }
        const unsigned char c = (unsigned char)m->key[i];
        buf[n++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
    }
    buf[n] = '\0';
}

static int check_duplicate_keys(Parser *p, const JsonMember *members, size_t count)
{
    const JsonMember *dup = NULL;
    if (count < 2) return 0;
    if (count <= 16) {
        for (size_t i = 1; i < count && !dup; i++)
            for (size_t j = 0; j < i; j++)
                if (keys_equal(&members[i], &members[j])) {
                    dup = &members[i];
                    break;
                }
    } else {
        /* Sorting keeps hostile inputs with many keys at n log n. */
        const JsonMember **sorted = malloc(count * sizeof(*sorted));
        if (!sorted) return fail_nomem(p);
        for (size_t i = 0; i < count; i++) sorted[i] = &members[i];
        qsort(sorted, count, sizeof(*sorted), compare_keys);
        for (size_t i = 1; i < count; i++)
            if (keys_equal(sorted[i], sorted[i - 1]) &&
                (!dup || sorted[i]->key_offset < dup->key_offset))
                dup = sorted[i];
        free(sorted);
    }
    if (!dup) return 0;
    char key[48];
    printable_key(dup, key, sizeof(key));
    return fail(p, dup->key_offset, "duplicate key \"%s\" in an object", key);
}

static int parse_object(Parser *p, JsonValue *out, size_t depth)
{
    const size_t base = p->member_count;
    int more = open_container(p, depth, '}');
    while (more > 0) {
        JsonMember m;
        skip_whitespace(p);
        if (p->pos >= p->length || p->text[p->pos] != '"')
            return fail_unexpected(p, p->pos, "a string key in an object");
        m.key_offset = p->pos;
        int err = parse_string(p, &m.key, &m.key_length);
        if (err) return err;
        skip_whitespace(p);
        if (p->pos >= p->length || p->text[p->pos] != ':')
            return fail_unexpected(p, p->pos, "':' after an object key");
        p->pos++;
        err = parse_value(p, &m.value, depth);
        if (err) return err;
        if (p->member_count == p->member_capacity &&
            grow((void **)&p->members, &p->member_capacity, sizeof(*p->members)))
            return fail_nomem(p);
        p->members[p->member_count++] = m;
        more = next_element(p, '}', "',' or '}' in an object");
    }
    if (more < 0) return more;

    const size_t count = p->member_count - base;
    JsonMember *members = NULL;
    if (count) {
        const int err = check_duplicate_keys(p, p->members + base, count);
        if (err) return err;
        members = arena_alloc(p->doc, count * sizeof(*members));
        if (!members) return fail_nomem(p);
        memcpy(members, p->members + base, count * sizeof(*members));
    }
    p->member_count = base;
    out->type = JSON_OBJECT;
    out->u.object.members = members;
    out->u.object.count = count;
    return 0;
}

static int parse_value(Parser *p, JsonValue *out, size_t depth)
{
    skip_whitespace(p);
    memset(out, 0, sizeof(*out));
    out->offset = p->pos;
    if (p->pos >= p->length)
        return fail(p, p->pos, "unexpected end of the input, expected a value");
    if (++p->value_count > p->max_values)
        return fail(p, p->pos, "more than %zu values in the document",
                    p->max_values);

    switch (p->text[p->pos]) {
    case '{':
        return parse_object(p, out, depth + 1);
    case '[':
        return parse_array(p, out, depth + 1);
    case '"':
        out->type = JSON_STRING;
        return parse_string(p, &out->u.string.chars, &out->u.string.length);
    case 't':
        out->type = JSON_BOOL;
        out->u.boolean = true;
        return parse_literal(p, "true", out);
    case 'f':
        out->type = JSON_BOOL;
        out->u.boolean = false;
        return parse_literal(p, "false", out);
    case 'n':
        out->type = JSON_NULL;
        return parse_literal(p, "null", out);
    default:
        if (p->text[p->pos] == '-' || is_digit(p->text[p->pos]))
            return parse_number(p, out);
        return fail_unexpected(p, p->pos, "a value");
    }
}

int json_parse(JsonDocument **doc, const char *text, size_t length,
               const JsonLimits *limits, JsonError *error)
{
    if (error) {
        error->line = error->column = 0;
        error->message[0] = '\0';
    }
    if (!doc) return -EINVAL;
    *doc = NULL;
    if (!text && length) {
        if (error) snprintf(error->message, sizeof(error->message), "no text");
        return -EINVAL;
    }

    Parser p;
    memset(&p, 0, sizeof(p));
    p.text = (const unsigned char *)text;
    p.length = length;
    p.max_depth = limits ? limits->max_depth : JSON_DEFAULT_MAX_DEPTH;
    if (p.max_depth > JSON_MAX_DEPTH_CAP) p.max_depth = JSON_MAX_DEPTH_CAP;
    p.max_values = limits ? limits->max_values : JSON_DEFAULT_MAX_VALUES;

    p.doc = calloc(1, sizeof(*p.doc));
    if (!p.doc) {
        if (error) snprintf(error->message, sizeof(error->message), "out of memory");
        return -ENOMEM;
    }

    /* Editors on some systems start UTF-8 files with a byte order mark. */
    if (length >= 3 && !memcmp(text, "\xef\xbb\xbf", 3)) p.pos = 3;

    skip_whitespace(&p);
    if (p.pos >= p.length) {
        fail(&p, p.pos, "empty input: no JSON value");
    } else if (!parse_value(&p, &p.doc->root, 0)) {
        skip_whitespace(&p);
        if (p.pos < p.length) {
            char buf[16];
            fail(&p, p.pos, "unexpected %s after the JSON value",
                 describe_at(&p, p.pos, buf, sizeof(buf)));
        }
    }

    free(p.items);
    free(p.members);
    if (p.status) {
        if (error) {
            json_position(text, length, p.error_offset, &error->line,
                          &error->column);
            snprintf(error->message, sizeof(error->message), "%s", p.message);
        }
        json_document_free(&p.doc);
        return p.status;
    }
    *doc = p.doc;
    return 0;
}

/* ---- queries ------------------------------------------------------------ */

const JsonValue *json_object_get(const JsonValue *object, const char *key)
{
    if (!object || object->type != JSON_OBJECT || !key) return NULL;
    const size_t n = strlen(key);
    for (size_t i = 0; i < object->u.object.count; i++) {
        const JsonMember *m = &object->u.object.members[i];
        if (m->key_length == n && !memcmp(m->key, key, n)) return &m->value;
    }
    return NULL;
}

const char *json_type_name(enum JsonType type)
{
    switch (type) {
    case JSON_NULL: return "null";
    case JSON_BOOL: return "a boolean";
    case JSON_NUMBER: return "a number";
    case JSON_STRING: return "a string";
    case JSON_ARRAY: return "an array";
    case JSON_OBJECT: return "an object";
    }
    return "an unknown value";
}

void json_position(const char *text, size_t length, size_t offset,
                   unsigned *line, unsigned *column)
{
    unsigned l = 1, c = 1;
    if (offset > length) offset = length;
    for (size_t i = 0; text && i < offset; i++) {
        const unsigned char b = (unsigned char)text[i];
        if (b == '\n') {
            l++;
            c = 1;
        } else if ((b & 0xc0) != 0x80) {
            c++; /* continuation bytes belong to the character before */
        }
    }
    if (line) *line = l;
    if (column) *column = c;
}

/* ---- files -------------------------------------------------------------- */

int json_read_file(const char *path, size_t max_size, char **text,
                   size_t *length, char *error, size_t error_size)
{
    *text = NULL;
    *length = 0;
    FILE *f = fopen(path, "rb");
    if (!f) {
        const int e = errno ? errno : EIO;
        if (error_size) snprintf(error, error_size, "%s: %s", path, strerror(e));
        return -e;
    }

    /* Read in chunks rather than trusting a size from stat(): the path may
     * be a pipe or a file that grows while we read it. */
    size_t capacity = 0, n = 0;
    char *buf = NULL;
    int err = 0;
    for (;;) {
        if (capacity - n < 4096 + 1) {
            const size_t fresh = capacity ? capacity * 2 : 65536;
            char *p = fresh > capacity ? realloc(buf, fresh) : NULL;
            if (!p) {
                err = -ENOMEM;
                if (error_size) snprintf(error, error_size, "%s: out of memory", path);
                break;
            }
            buf = p;
            capacity = fresh;
        }
        errno = 0;
        const size_t got = fread(buf + n, 1, capacity - n - 1, f);
        n += got;
        if (n > max_size) {
            err = -EFBIG;
            if (error_size)
                snprintf(error, error_size, "%s: larger than %zu bytes", path, max_size);
            break;
        }
        if (got == 0) {
            if (ferror(f)) {
                const int e = errno ? errno : EIO;
                err = -e;
                if (error_size) snprintf(error, error_size, "%s: %s", path, strerror(e));
            }
            break;
        }
    }
    fclose(f);
    if (err) {
        free(buf);
        return err;
    }
    if (!buf) {
        buf = malloc(1);
        if (!buf) {
            if (error_size) snprintf(error, error_size, "%s: out of memory", path);
            return -ENOMEM;
        }
    }
    buf[n] = '\0';
    *text = buf;
    *length = n;
    return 0;
}

/* ---- locale-independent number conversion ------------------------------- */

/*
 * strtod() honours LC_NUMERIC.  When the locale's decimal point is not '.',
 * copy the number, write the locale's point in place of '.', convert, and map
 * the end back.  Only the characters a decimal number can hold are copied.
 */
static const char *locale_point(void)
{
    const struct lconv *lc = localeconv();
    if (!lc || !lc->decimal_point || !lc->decimal_point[0]) return ".";
    return lc->decimal_point;
}

static int number_char(char c)
{
    return (c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' ||
           c == '+' || c == '-';
}

static int space_char(char c)
{
    return c == ' ' || (c >= '\t' && c <= '\r');
}

typedef struct Localized {
    char small[128];
    char *buf;         /* NULL: the text is read as it is */
    const char *point; /* the locale's decimal point */
} Localized;

/* Fills l->buf with the number at text in the locale's form; NULL if out of
 * memory. */
static char *localize(Localized *l, const char *text, const char *point)
{
    const size_t plen = strlen(point);
    size_t i = 0;
    while (space_char(text[i])) i++;
    size_t run = 0;
    while (number_char(text[i + run])) run++;
    if (run > (SIZE_MAX - 1) / plen) return NULL;
    const size_t need = run * plen + 1;
    l->buf = need <= sizeof(l->small) ? l->small : malloc(need);
    if (!l->buf) return NULL;
    size_t n = 0;
    for (size_t k = 0; k < run; k++) {
        if (text[i + k] == '.') {
            memcpy(l->buf + n, point, plen);
            n += plen;
        } else {
            l->buf[n++] = text[i + k];
        }
    }
    l->buf[n] = '\0';
    return l->buf;
}

/* Where a conversion that used `consumed` bytes of the copy stopped in text. */
static char *map_end(const char *text, const char *point, size_t consumed)
{
    if (consumed == 0) return (char *)text;
    const size_t plen = strlen(point);
    size_t i = 0, n = 0;
    while (space_char(text[i])) i++;
    while (n < consumed) {
        n += text[i] == '.' ? plen : 1;
        i++;
    }
    return (char *)text + i;
}

/* What strtod() or strtof() reads for text under the current locale: text
 * itself where the locale's point is '.', else l's copy in the locale's
 * form (NULL, with errno ENOMEM and *end at text, when out of memory). */
static const char *localized_input(Localized *l, const char *text, char **end)
{
    l->point = locale_point();
    l->buf = NULL;
    if (!strcmp(l->point, ".")) return text;
    if (!localize(l, text, l->point)) {
        if (end) *end = (char *)text;
        errno = ENOMEM;
        return NULL;
    }
    return l->buf;
}

/* After the conversion stopped at stop in localized_input()'s string: the
 * place in text to give back in *end, and the copy let go. */
static void localized_finish(Localized *l, const char *text, char *stop, char **end)
{
    if (!l->buf) {
        if (end) *end = stop;
        return;
    }
    if (end) *end = map_end(text, l->point, (size_t)(stop - l->buf));
    if (l->buf != l->small) free(l->buf);
}

double json_strtod(const char *text, char **end)
{
    Localized l;
    const char *in = localized_input(&l, text, end);
    if (!in) return 0.0;
    char *stop = NULL;
    const double v = strtod(in, &stop);
    localized_finish(&l, text, stop, end);
    return v;
}

float json_strtof(const char *text, char **end)
{
    Localized l;
    const char *in = localized_input(&l, text, end);
    if (!in) return 0.0f;
    char *stop = NULL;
    const float v = strtof(in, &stop);
    localized_finish(&l, text, stop, end);
    return v;
}
