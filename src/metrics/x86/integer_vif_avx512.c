#include "metrics/integer_vif.h"
void vif_dsp_init_avx512(VifDsp *dsp) { (void)dsp; }
