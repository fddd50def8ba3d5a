/* The public header compiles on its own as C, with nothing before it. */
#include "quale/quale.h"

int main(void)
{
    return quale_metric_count() > 0 ? 0 : 1;
}
