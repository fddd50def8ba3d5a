#include "metrics/integer_adm.h"

void adm_dsp_init_avx2(AdmDsp *dsp)
{
    (void)dsp;
}
