/*
 * quale --list-features, --list-models, --list-devices (text or JSON).
 */
#ifndef QUALE_TOOLS_QUALE_LISTING_H
#define QUALE_TOOLS_QUALE_LISTING_H

#include <stdbool.h>

/* Each prints its listing on standard output; the exit status. */
int list_features(bool json);
int list_models(bool json);
int print_devices(bool json);

/* s as a JSON string, quotes and escapes included. */
void print_json_string(FILE *f, const char *s);

#endif /* QUALE_TOOLS_QUALE_LISTING_H */
