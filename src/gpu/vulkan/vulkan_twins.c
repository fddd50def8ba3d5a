/* Every Vulkan twin of this build (the list in src/meson.build). */
#include "metric_list.h"
#include "vulkan_twin.h"

#define DECLARE_TWIN(name) extern const VulkanTwin vulkan_twin_##name;
QUALE_VULKAN_TWINS(DECLARE_TWIN)

#define LIST_TWIN(name) &vulkan_twin_##name,
const VulkanTwin *const vulkan_twins[] = { QUALE_VULKAN_TWINS(LIST_TWIN) NULL };
