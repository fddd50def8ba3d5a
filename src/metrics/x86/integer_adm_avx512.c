#include "metrics/integer_adm.h"

void adm_dsp_init_avx512(AdmDsp *dsp)
{
    (void)dsp;
}
