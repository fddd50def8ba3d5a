// The public header compiles on its own as C++ and declares C linkage.
#include "quale/quale.h"

int main()
{
    QualeSettings settings;
    quale_settings_default(&settings);
    return quale_version() && settings.backend == QUALE_BACKEND_CPU ? 0 : 1;
}
