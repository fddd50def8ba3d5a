/*
 * The tool's part of a results file's provenance (provenance.h).  The
 * command line is the one the run's settings were parsed from (the
 * command typed, or a batch pair's), quoted so that it can be pasted back
 * into a shell.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "provenance.h"


char *provenance_shell_quote(const char *word)
{
    static const char plain[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                "0123456789_@%+=:,./-";
    if (*word && !word[strspn(word, plain)]) return strdup(word);
    size_t quotes = 0;
    for (const char *c = word; *c; c++) quotes += *c == '\'';
    char *out = malloc(strlen(word) + 3 * quotes + 3);
    if (!out) return NULL;
    char *o = out;
    *o++ = '\'';
    for (const char *c = word; *c; c++) {
        if (*c == '\'') {
            memcpy(o, "'\\''", 4);
            o += 4;
        } else {
            *o++ = *c;
        }
    }
    *o++ = '\'';
    *o = '\0';
    return out;
}

static void begin(ToolProvenance *p, const char *section)
{
    const unsigned r = p->count++;
    p->records[r] = (QualeProvenanceRecord){ .section = section, .facts = p->facts[r] };
}

/* The length of the valid UTF-8 sequence at s (1 to 4), 0 when it is
 * not one. */
static size_t utf8_length(const unsigned char *s)
{
    static const unsigned smallest[5] = { 0, 0, 0x80, 0x800, 0x10000 };
    size_t n;
    unsigned cp;
    if (s[0] < 0x80) return 1;
    if ((s[0] & 0xe0) == 0xc0) n = 2, cp = s[0] & 0x1f;
    else if ((s[0] & 0xf0) == 0xe0) n = 3, cp = s[0] & 0x0f;
    else if ((s[0] & 0xf8) == 0xf0) n = 4, cp = s[0] & 0x07;
    else return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0; /* also stops at the end */
        cp = cp << 6 | (s[i] & 0x3f);
    }
    return cp < smallest[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) ? 0 : n;
}

/* text as UTF-8 (a file's name is any bytes; the results are UTF-8): each
 * byte that is not part of a valid sequence becomes U+FFFD.  Takes text
 * (malloc'ed); NULL when out of memory. */
static char *as_utf8(char *text)
{
    if (!text) return NULL;
    size_t bad = 0;
    for (const unsigned char *c = (const unsigned char *)text; *c;) {
        const size_t n = utf8_length(c);
        bad += !n;
        c += n ? n : 1;
    }
    if (!bad) return text;
    char *out = malloc(strlen(text) + 2 * bad + 1), *o = out;
    for (const unsigned char *c = (const unsigned char *)text; out && *c;) {
        const size_t n = utf8_length(c);
        if (n) memcpy(o, c, n), o += n, c += n;
        else memcpy(o, "\xef\xbf\xbd", 3), o += 3, c++;
    }
    if (out) *o = '\0';
    free(text);
    return out;
}

/* Adds a fact to the last record, taking value (malloc'ed); -1 when it is
 * NULL or there is no room. */
static int add_owned(ToolProvenance *p, const char *name, char *value)
{
    value = as_utf8(value);
    QualeProvenanceRecord *r = &p->records[p->count - 1];
    if (!value || r->fact_count == TOOL_PROVENANCE_FACTS) {
        free(value);
        return value ? 0 : -1;
    }
    p->owned[p->owned_count++] = value;
    p->facts[p->count - 1][r->fact_count++] = (QualeOutputNote){ name, value };
    return 0;
}

static int add(ToolProvenance *p, const char *name, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static int add(ToolProvenance *p, const char *name, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    char *text = NULL;
    const int n = vasprintf(&text, format, args);
    va_end(args);
    return add_owned(p, name, n < 0 ? NULL : text);
}

static const char *chroma_name(enum QualeChroma c)
{
    switch (c) {
    case QUALE_CHROMA_400: return "4:0:0";
    case QUALE_CHROMA_420: return "4:2:0";
    case QUALE_CHROMA_422: return "4:2:2";
    case QUALE_CHROMA_444: return "4:4:4";
    default: return "unknown";
    }
}

/* The notes about one video ("distorted_scaled") as its own facts
 * ("scaled"); the notes of neither video go to the pair's record. */
static int add_notes(ToolProvenance *p, const InputNotes *notes, const char *prefix)
{
    const size_t length = prefix ? strlen(prefix) : 0;
    int err = 0;
    for (unsigned i = 0; i < notes->count && !err; i++) {
        const char *name = notes->note[i].name;
        const bool of_a_video = !strncmp(name, "reference_", 10) ||
                                !strncmp(name, "distorted_", 10);
        if (prefix ? strncmp(name, prefix, length) : of_a_video) continue;
        err = add(p, name + length, "%s", notes->note[i].value);
    }
    return err;
}

/* One video: as given, as read, as decoded. */
static int add_input(ToolProvenance *p, const Input *in, const char *role,
                     const InputNotes *notes)
{
    const QualeVideoReader *reader = in->lanes[0];
    QualeVideoFormat f;
    quale_video_get_format(reader, &f);
    begin(p, "input");
    int err = add(p, "role", "%s", role) | add(p, "name", "%s", in->path);
    struct stat st;
    if (strcmp(in->path, "-") && !stat(in->path, &st) && S_ISREG(st.st_mode))
        err |= add(p, "bytes", "%lld", (long long)st.st_size);
    err |= add(p, "format", "%ux%u %s %u-bit", f.width, f.height, chroma_name(f.chroma),
               f.bitdepth);
    char prefix[16], noted_rate[32];
    snprintf(prefix, sizeof(prefix), "%s_", role);
    snprintf(noted_rate, sizeof(noted_rate), "%sframe_rate", prefix);
    bool rate_noted = false;
    for (unsigned i = 0; i < notes->count; i++)
        rate_noted |= !strcmp(notes->note[i].name, noted_rate);
    unsigned num, den;
    if (!rate_noted && quale_video_frame_rate(reader, &num, &den) >= 0)
        err |= add(p, "frame_rate", "%u/%u", num, den);
    /* a compressed video's decoder is in its notes */
    if (!quale_video_codec(reader))
        err |= add(p, "decoder", "%s", quale_video_is_y4m(reader) ? "YUV4MPEG2" : "raw YUV");
    return err | add_notes(p, notes, prefix);
}

static int add_command(ToolProvenance *p, int command_argc, char *const *command_argv)
{
    size_t size = 1;
    char **words = calloc(command_argc ? (size_t)command_argc : 1, sizeof(*words));
    int err = words ? 0 : -1;
    for (int i = 0; i < command_argc && !err; i++) {
        words[i] = provenance_shell_quote(command_argv[i]);
        if (!words[i]) err = -1;
        else size += strlen(words[i]) + 1;
    }
    char *line = err ? NULL : malloc(size);
    if (line) {
        line[0] = '\0';
        for (int i = 0; i < command_argc; i++) {
            if (i) strcat(line, " ");
            strcat(line, words[i]);
        }
    }
    for (int i = 0; words && i < command_argc; i++) free(words[i]);
    free(words);
    begin(p, "command");
    return add_owned(p, "line", line);
}

int provenance_gather(ToolProvenance *p, const CliSettings *s, const Input inputs[2],
                      const InputNotes *notes)
{
    *p = (ToolProvenance){ 0 };
    int err = add_input(p, &inputs[0], "reference", notes) |
              add_input(p, &inputs[1], "distorted", notes);
    bool pair_notes = false;
    for (unsigned i = 0; i < notes->count; i++)
        pair_notes |= strncmp(notes->note[i].name, "reference_", 10) &&
                      strncmp(notes->note[i].name, "distorted_", 10);
    if (pair_notes) {
        begin(p, "scoring");
        err |= add_notes(p, notes, NULL);
    }
    if (s->command_argc) err |= add_command(p, s->command_argc, s->command_argv);
    return err ? -1 : 0;
}

void provenance_release(ToolProvenance *p)
{
    for (unsigned i = 0; i < p->owned_count; i++) free(p->owned[i]);
    *p = (ToolProvenance){ 0 };
}
