/*
 * The exact arithmetic of src/vulkan/fp64.glsl against C, case by case, on
 * the Vulkan device: float division, float square root and C's
 * (float)(1.0 / sqrt((double)u)) (each from the driver's approximate
 * result, stepped by exact midpoint tests), the emulated fused
 * multiply-add, log2 of doubles, and the rounding of doubles to float.
 * Cases: random operands over the whole range the shaders see, and the
 * hard ones: quotients and roots next to a midpoint between floats, u
 * whose 1/sqrt(u) lies within 2^-48 of one (C's double chain decides),
 * fma whose fused and separate roundings differ, doubles half way between
 * floats.  Every result bit for bit, but log2 (within an ulp of the C
 * library's, as libraries are among themselves; the count of those not
 * equal is printed).
 *
 * Exits 77 (skip) when no Vulkan device with shaderFloat64 is present.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "gpu/vulkan/spirv_reflect.h"
#include "gpu/vulkan/vulkan_twin.h"

extern const unsigned char vulkan_test_fp64[];
extern const size_t vulkan_test_fp64_size;

#define GROUP 64
#define CAPACITY 200000

typedef struct Push {
    uint32_t count, mode;
} Push;

/* C structs that are not the shader's block: a member more, one less, one
 * of another width (which moves it too), and a block of the right size
 * whose members are cut differently. */
typedef struct PushMore {
    uint32_t count, mode, extra;
} PushMore;
typedef struct PushLess {
    uint32_t count;
} PushLess;
typedef struct PushWide {
    uint32_t count;
    uint64_t mode;
} PushWide;
typedef struct PushOne {
    uint64_t both;
} PushOne;

static uint64_t rng_state = 0x6a09e667f3bcc909ull;

static uint64_t rng64(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* A uniform double in [0, 1). */
static double unit(void)
{
    return (double)(rng64() >> 11) * 0x1p-53;
}

/* A float of random mantissa and an exponent in [lo, hi]. */
static float rng_float(int lo, int hi)
{
    const int e = lo + (int)(rng64() % (uint64_t)(hi - lo + 1));
    return ldexpf(1.0f + (float)(rng64() >> 41) * 0x1p-23f, e) * (rng64() & 1 ? -1.0f : 1.0f);
}

static float next_float(float f)
{
    return nextafterf(f, INFINITY);
}

typedef struct Runner {
    VulkanDevice dev;
    VulkanBuffer inputs, outputs;
    VulkanPipeline pipeline;
    VkCommandPool pool;
    VkCommandBuffer cb;
    VkFence fence;
} Runner;

static double *in_case(Runner *r, uint32_t i)
{
    return (double *)r->inputs.mapped + 4 * (size_t)i;
}

static int run_mode(Runner *r, uint32_t mode, uint32_t count)
{
    VulkanDevice *dev = &r->dev;
    const Push push = { count, mode };
    const VkCommandBufferBeginInfo begin = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
        .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
    };
    VkResult res = dev->api.vkResetCommandBuffer(r->cb, 0);
    if (res == VK_SUCCESS) res = dev->api.vkBeginCommandBuffer(r->cb, &begin);
    if (res == VK_SUCCESS) {
        vulkan_dispatch(dev, r->cb, &r->pipeline, &push, (count + GROUP - 1) / GROUP, 1);
        const VkMemoryBarrier to_host = {
            .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
            .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
            .dstAccessMask = VK_ACCESS_HOST_READ_BIT,
        };
        dev->api.vkCmdPipelineBarrier(r->cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                                      VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &to_host, 0, NULL, 0,
                                      NULL);
        res = dev->api.vkEndCommandBuffer(r->cb);
    }
    const VkSubmitInfo submit = {
        .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
        .commandBufferCount = 1,
        .pCommandBuffers = &r->cb,
    };
    if (res == VK_SUCCESS) res = dev->api.vkResetFences(dev->device, 1, &r->fence);
    if (res == VK_SUCCESS) res = vulkan_queue_submit(dev, dev->queue, 1, &submit, r->fence);
    if (res == VK_SUCCESS)
        res = dev->api.vkWaitForFences(dev->device, 1, &r->fence, VK_TRUE, UINT64_MAX);
    if (res != VK_SUCCESS)
        fprintf(stderr, "test_fp64_vulkan: running the shader failed: %s\n",
                vulkan_result_text(res));
    return res == VK_SUCCESS ? 0 : -1;
}

/* ---- the cases and what C gives ----------------------------------------------- */

enum { DIV, SQRT, RSQRT, FMA, LOG2, ROUND, RSQRT_STEPS, MODES };
static const char *const mode_names[MODES] = {
    "f32_div", "f32_sqrt_rn", "f32_rsqrt_c", "f64_fma", "f64_log2", "f32_from_f64",
    "f32_rsqrt_c's double steps",
};

static uint32_t make_cases(Runner *r, unsigned mode)
{
    uint32_t n = 0;
    while (n < CAPACITY) {
        double *c = in_case(r, n);
        c[0] = c[1] = c[2] = c[3] = 0;
        const unsigned kind = (unsigned)(rng64() % 4);
        switch (mode) {
        case DIV: {
            /* quotients of normal floats only (a device may flush
             * subnormal ones to zero, as Vulkan allows) */
            const float b = rng_float(-40, 40);
            if (kind == 0) {
                /* a quotient next to a midpoint: a = q_mid * b rounded */
                const float q = rng_float(-40, 40);
                const double mid = ((double)q + (double)next_float(fabsf(q)) * (q < 0 ? -1 : 1)) / 2;
                c[0] = (double)(float)(mid * b);
            } else {
                c[0] = rng_float(-40, 40) * (kind == 1 ? 0x1p-30f : 1.0f);
            }
            c[1] = b;
            break;
        }
        case SQRT: {
            if (kind == 0) {
                /* a square next to a midpoint's */
                const float f = fabsf(rng_float(-60, 60));
                const double mid = ((double)f + (double)next_float(f)) / 2;
                c[0] = (double)(float)(mid * mid);
            } else {
                c[0] = fabsf(rng_float(-120, 120));
            }
            break;
        }
        case RSQRT:
        case RSQRT_STEPS: {
            float u;
            if (kind <= 1) {
                /* 1/sqrt(u) near a midpoint m: u = 1 / m^2 rounded; some
                 * within 2^-48 of it, found among many */
                const float m0 = (float)(0.5 + unit());
                const double m = ((double)m0 + (double)next_float(m0)) / 2;
                u = (float)(1.0 / (m * m));
                if (kind == 1) {
                    bool close = false;
                    for (int t = 0; t < 64 && !close; t++) {
                        const float v = nextafterf(u, t % 2 ? INFINITY : 0.0f);
                        const double d = fabs(1.0 - m * m * (double)v);
                        if (d < 0x1p-40) u = v, close = true;
                    }
                }
            } else {
                u = 1.0f + (float)unit() * (kind == 2 ? 1.0f : 1e6f);
            }
            c[0] = u;
            break;
        }
        case FMA: {
            const double a = (unit() - 0.5) * ldexp(1, (int)(rng64() % 40) - 20);
            const double b = (unit() - 0.5) * ldexp(1, (int)(rng64() % 40) - 20);
            c[0] = a;
            c[1] = b;
            /* c: minus the rounded product (fused and separate differ),
             * near it, or anything */
            c[2] = kind == 0 ? -(a * b) : kind == 1 ? -(a * b) * (1 + 0x1p-30) : (unit() - 0.5) * 1e3;
            break;
        }
        case LOG2:
            c[0] = kind == 0 ? 0.1 + unit() * 10 : ldexp(1 + unit(), (int)(rng64() % 200) - 100);
            break;
        default: {
            /* doubles at, next to and between the midpoints of floats */
            const float f = rng_float(-100, 100);
            const double mid = ((double)f + (double)nextafterf(f, f < 0 ? -INFINITY : INFINITY)) / 2;
            c[0] = kind == 0 ? mid : kind == 1 ? nextafter(mid, 0) : kind == 2 ? nextafter(mid, 1e300 * mid) : (double)f + unit() * 1e-9 * f;
            break;
        }
        }
        n++;
    }
    return n;
}

static double expected(unsigned mode, const double *c)
{
    switch (mode) {
    case DIV: return (double)((float)c[0] / (float)c[1]);
    case SQRT: return (double)(float)sqrt(c[0]);
    case RSQRT:
    case RSQRT_STEPS: return (double)(float)(1.0 / sqrt((double)(float)c[0]));
    case FMA: return fma(c[0], c[1], c[2]);
    case LOG2: return log2(c[0]);
    default: return (double)(float)c[0];
    }
}

static void check_mode(Runner *r, unsigned mode)
{
    const uint32_t count = make_cases(r, mode);
    memset(r->outputs.mapped, 0xa5, (size_t)count * sizeof(double));
    if (run_mode(r, mode, count)) {
        CHECK(!"the shader ran");
        return;
    }
    const double *out = r->outputs.mapped;
    uint32_t wrong = 0, off_by_ulp = 0;
    for (uint32_t i = 0; i < count; i++) {
        const double *c = in_case(r, i);
        const double want = expected(mode, c), got = out[i];
        if (!memcmp(&want, &got, sizeof(want))) continue;
        if (mode == LOG2 && (nextafter(want, INFINITY) == got || nextafter(want, -INFINITY) == got)) {
            off_by_ulp++;
            continue;
        }
        if (wrong++ < 5)
            fprintf(stderr, "%s: case %u (%.17g, %.17g, %.17g): %.17g, C gives %.17g\n",
                    mode_names[mode], i, c[0], c[1], c[2], got, want);
    }
    printf("%s: %u cases, %u differ%s", mode_names[mode], count, wrong,
           mode == LOG2 ? "" : "\n");
    if (mode == LOG2) printf(" by more than an ulp, %u by one\n", off_by_ulp);
    CHECK(wrong == 0);
}

int main(void)
{
    char error[512];
    Runner r;
    memset(&r, 0, sizeof(r));
    if (vulkan_device_open(&r.dev, -1, error, sizeof(error))) {
        printf("skip: %s\n", error);
        return 77;
    }
    VulkanDevice *dev = &r.dev;
    printf("device: %s\n", dev->properties.deviceName);
    if (!dev->features.shaderFloat64) {
        printf("skip: the device has no shaderFloat64\n");
        vulkan_device_close(dev);
        return 77;
    }
    const VkBufferUsageFlags usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
    int err = vulkan_buffer_create(dev, (VkDeviceSize)CAPACITY * 4 * sizeof(double), usage, true,
                                   &r.inputs, "the cases", error, sizeof(error));
    if (!err)
        err = vulkan_buffer_create(dev, (VkDeviceSize)CAPACITY * sizeof(double), usage, true,
                                   &r.outputs, "the results", error, sizeof(error));
    const VkBuffer buffers[2] = { r.inputs.buffer, r.outputs.buffer };
    /* A C struct that is not the shader's block is refused when the
     * pipeline is made, saying where the two part. */
    uint32_t block = 0;
    CHECK(spirv_push_constant_size((const uint32_t *)vulkan_test_fp64, vulkan_test_fp64_size,
                                   &block) == 0 && block == sizeof(Push));
    CHECK(spirv_push_constant_size((const uint32_t *)vulkan_test_fp64, 12, &block) == -1);
    SpirvMember members[4];
    unsigned member_count = 0;
    CHECK(spirv_push_constant_members((const uint32_t *)vulkan_test_fp64, vulkan_test_fp64_size,
                                      members, 4, &member_count) == 0 && member_count == 2 &&
          members[0].offset == 0 && members[0].size == 4 && members[1].offset == 4 &&
          members[1].size == 4 && !members[0].is_struct);
    const struct {
        const VulkanPushLayout *layout;
        const char *says;
    } wrong_layouts[] = {
        { VULKAN_PUSH(PushMore, count, mode, extra), "2 members in the shader and 3 in the C" },
        { VULKAN_PUSH(PushLess, count), "2 members in the shader and 1 in the C" },
        { VULKAN_PUSH(PushWide, count, mode),
          "member 1 is 4 bytes at byte 4 in the shader and 8 bytes at byte 8 in the C" },
        { VULKAN_PUSH(PushOne, both), "2 members in the shader and 1 in the C" },
        { NULL, "push constants in the shader but none in the C code" },
    };
    for (size_t i = 0; i < sizeof(wrong_layouts) / sizeof(wrong_layouts[0]) && !err; i++) {
        VulkanPipeline wrong;
        char why[512] = "";
        CHECK(vulkan_pipeline_create(dev, (const uint32_t *)vulkan_test_fp64, vulkan_test_fp64_size,
                                     buffers, 2, wrong_layouts[i].layout, &wrong,
                                     "the test shader", why, sizeof(why)) == -EINVAL &&
              strstr(why, wrong_layouts[i].says) != NULL);
        vulkan_pipeline_destroy(dev, &wrong);
    }
    if (!err)
        err = vulkan_pipeline_create(dev, (const uint32_t *)vulkan_test_fp64, vulkan_test_fp64_size,
                                     buffers, 2, VULKAN_PUSH(Push, count, mode), &r.pipeline,
                                     "the test shader",
                                     error, sizeof(error));
    const VkCommandPoolCreateInfo pool_info = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
        .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
        .queueFamilyIndex = dev->queue_family,
    };
    if (!err && dev->api.vkCreateCommandPool(dev->device, &pool_info, NULL, &r.pool) != VK_SUCCESS)
        err = -EIO;
    const VkCommandBufferAllocateInfo cb_info = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
        .commandPool = r.pool,
        .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
        .commandBufferCount = 1,
    };
    if (!err && dev->api.vkAllocateCommandBuffers(dev->device, &cb_info, &r.cb) != VK_SUCCESS)
        err = -EIO;
    const VkFenceCreateInfo fence_info = { .sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO };
    if (!err && dev->api.vkCreateFence(dev->device, &fence_info, NULL, &r.fence) != VK_SUCCESS)
        err = -EIO;
    CHECK(err == 0);
    if (err) fprintf(stderr, "test_fp64_vulkan: setting up failed (%s)\n", error);
    else
        for (unsigned mode = 0; mode < MODES; mode++) check_mode(&r, mode);
    if (r.fence) dev->api.vkDestroyFence(dev->device, r.fence, NULL);
    if (r.pool) dev->api.vkDestroyCommandPool(dev->device, r.pool, NULL);
    vulkan_pipeline_destroy(dev, &r.pipeline);
    vulkan_buffer_destroy(dev, &r.inputs);
    vulkan_buffer_destroy(dev, &r.outputs);
    vulkan_device_close(dev);
    return test_summary();
}
