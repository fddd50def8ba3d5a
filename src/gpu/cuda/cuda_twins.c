/* Every CUDA twin of this build (the list in src/meson.build). */
#include "cuda_twin.h"
#include "metric_list.h"

#define DECLARE_TWIN(name) extern const CudaTwin cuda_twin_##name;
QUALE_CUDA_TWINS(DECLARE_TWIN)

#define LIST_TWIN(name) &cuda_twin_##name,
const CudaTwin *const cuda_twins[] = { QUALE_CUDA_TWINS(LIST_TWIN) NULL };
