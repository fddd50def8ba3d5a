#include "quale/quale.h"

const char *quale_version(void)
{
    return QUALE_VERSION_STRING;
}
