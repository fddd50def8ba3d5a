/*
 * Declarative metric options: a table of {name, type, offset, default,
 * range}, parsed from "name=value" strings into a metric's state.
 *
 * Options flagged OPTION_FEATURE_PARAM change the metric's output: when set
 * to a value other than their default, libvmaf appends "_<alias>_<value>"
 * to every key of the metric (e.g. integer_vif_scale0_egl_1), and so do we.
 *
 * An option is set by its name only.  The alias names it in keys, never in
 * a request: libvmaf looks options up by name and ignores any other key
 * ("vif=egl=1.5" leaves vif_enhn_gain_limit at its default there), so an
 * alias given as an option is an error here, as any unknown option is.
 *
 * A QUALE_OPTION_STRING option is a char * in the state that the state
 * owns: NULL (unset) by default, a copy of the value once set.  Whoever
 * frees a state calls options_free() first.
 */
#ifndef QUALE_SRC_OPTION_H
#define QUALE_SRC_OPTION_H

#include <stdbool.h>
#include <stddef.h>

#include "quale/quale.h"

enum OptionFlags {
    OPTION_FEATURE_PARAM = 1u << 0,
};

typedef struct MetricOption {
    const char *name;
    const char *help;
    const char *alias;             /* short name for key suffixes, or NULL */
    size_t offset;                 /* into the metric's state */
    enum QualeOptionType type;     /* bool, int, double, choice or string */
    union {
        bool b;
        int i;          /* also the default choice's index */
        double d;
    } default_value;
    const char *const *choices;    /* NULL-terminated names; the state holds
                                    * the index as an int */
    double min, max;               /* for int and double */
    unsigned flags;
} MetricOption;

/* Writes every option's default into state, which holds no string yet
 * (fresh, or after options_free). */
void options_set_defaults(const MetricOption *options, void *state);

/* Parses one value into state.  error receives a message on failure; a
 * string option copies value (-ENOMEM if it cannot). */
int option_set(const MetricOption *option, void *state, const char *value,
               char *error, size_t error_size);

/* Finds an option by name, NULL if the table has none. */
const MetricOption *option_find(const MetricOption *options, const char *name);

/* Finds the option whose alias (key suffix) is alias, NULL if none: for
 * the message when a request uses it as an option name. */
const MetricOption *option_find_alias(const MetricOption *options, const char *alias);

/* Whether the option in state holds its default value. */
bool option_is_default(const MetricOption *option, const void *state);

/*
 * The output name of a key under the options in state, libvmaf's rule:
 * the base key, then for every FEATURE_PARAM option that is not at its
 * default, in alphabetical order of option name, "_alias" for a bool and
 * "_alias_value" otherwise (value as "%g" / "%d", a choice by its name, a
 * string as given).
 */
int option_key_name(const MetricOption *options, const void *state,
                    const char *key, char *out, size_t out_size);

/*
 * Splits a metric request "name=opt=val:opt=val" (or just "name").
 * Calls fn for each option pair; returns the length of the name part in
 * *name_len.
 */
typedef int (*OptionPairFn)(void *cookie, const char *key, const char *value);
int option_spec_split(const char *spec, size_t *name_len, OptionPairFn fn,
                      void *cookie, char *error, size_t error_size);

/* Counts the entries of an option table. */
unsigned options_count(const MetricOption *options);

/* Whether two states hold the same value for every option of the table. */
bool options_equal(const MetricOption *options, const void *a, const void *b);

/* A request as a user would write it, for messages: the metric's name,
 * then every option that is not at its default ("float_ssim=enable_db=true",
 * or "float_ssim" when all are).  -ENAMETOOLONG (out cut) if it does not fit. */
int options_describe(const char *metric, const MetricOption *options, const void *state,
                     char *out, size_t out_size);

/* Frees the strings that state owns and leaves them unset (NULL). */
void options_free(const MetricOption *options, void *state);
#endif /* QUALE_SRC_OPTION_H */
