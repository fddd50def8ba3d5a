/*
 * Integer VIF's Vulkan arithmetic against the C reference, case by case:
 * vif_pixel() of src/metrics/integer_vif.h and the shaders' copy of it
 * (src/vulkan/integer_vif_pixel.glsl), both ways the twin runs it (the
 * device's doubles and 64-bit integers, and the integer emulation), on
 * inputs built to reach every rounding the doubles make:
 *   - variances around sigma_nsq and at every bit length;
 *   - covariances that are small multiples of the variance (g near an
 *     integer, so g * g * sigma1_sq lands next to an integer), and
 *     sigma2_sq at the integer part of g * sigma12 and around it;
 *   - gains past the limit, with the default limit and with 1;
 *   - random sums, and values of every width that wrap as libvmaf's do;
 * and the division on its own (native path): from guesses a few ulp off,
 * far off, or no number at all, vif_quotient() gives the double that IEEE
 * division gives.  A frame's statistics are sums of these per-sample
 * values, so equal values here mean equal sums on any picture.
 *
 * Exits 77 (skip) when no Vulkan device is present.  Runs with the
 * device's own features: on one without shaderFloat64 or shaderInt64 the
 * native half is skipped and says so.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/common/bitcast.h"
#include "metrics/integer_vif/integer_vif.h"
#include "test.h"
#include "metrics/integer_vif/vulkan/integer_vif_vulkan.h"
#include "gpu/vulkan/vulkan_twin.h"

extern const unsigned char vulkan_test_integer_vif[];
extern const size_t vulkan_test_integer_vif_size;
extern const unsigned char vulkan_test_integer_vif_native[];
extern const size_t vulkan_test_integer_vif_native_size;

#define GROUP 64
#define PIXEL_WORDS 8    /* mu1, mu2, xx, yy, xy (pairs of words) */
#define QUOTIENT_WORDS 4 /* sigma12, sigma1_sq, the guess's two words */

typedef struct Push {
    uint32_t count, mode, gain_lo, gain_hi;
} Push;

static uint64_t rng_state = 0x2545f4914f6cdd1dull;

static uint32_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 16);
}

static uint64_t rng64(void)
{
    return (uint64_t)rng() << 32 | rng();
}

/* A value of `bits` significant bits (1..32), its top bit set. */
static uint32_t rng_bits(unsigned bits)
{
    const uint32_t top = 1u << (bits - 1);
    return top | (rng() & (top - 1));
}

/* ---- one device, one shader ------------------------------------------------ */

typedef struct Runner {
    VulkanDevice dev;
    VulkanBuffer table, inputs, outputs;
    VkCommandPool pool;
    VkCommandBuffer cb;
    VkFence fence;
} Runner;

/* Runs `count` cases of `mode` through the shader; 0 on success. */
static int run_cases(Runner *r, const unsigned char *spirv, size_t spirv_size, uint32_t mode,
                     uint32_t count, double gain_limit)
{
    char error[512];
    VulkanDevice *dev = &r->dev;
    VulkanPipeline pipeline;
    const VkBuffer buffers[3] = { r->table.buffer, r->inputs.buffer, r->outputs.buffer };
    if (vulkan_pipeline_create(dev, (const uint32_t *)spirv, spirv_size, buffers, 3,
                               VULKAN_PUSH(Push, count, mode, gain_lo, gain_hi),
                               &pipeline, "the test shader", error, sizeof(error))) {
        fprintf(stderr, "test_integer_vif_vulkan: %s\n", error);
        return -1;
    }
    const uint64_t gain = bitcast_double_bits(gain_limit);
    const Push push = { count, mode, (uint32_t)gain, (uint32_t)(gain >> 32) };
    const VkCommandBufferBeginInfo begin = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
        .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
    };
    VkResult res = dev->api.vkResetCommandBuffer(r->cb, 0);
    if (res == VK_SUCCESS) res = dev->api.vkBeginCommandBuffer(r->cb, &begin);
    if (res == VK_SUCCESS) {
        vulkan_dispatch(dev, r->cb, &pipeline, &push, (count + GROUP - 1) / GROUP, 1);
        const VkMemoryBarrier to_host = {
            .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
            .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
            .dstAccessMask = VK_ACCESS_HOST_READ_BIT,
        };
        dev->api.vkCmdPipelineBarrier(r->cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                                      VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &to_host, 0, NULL, 0, NULL);
        res = dev->api.vkEndCommandBuffer(r->cb);
    }
    const VkSubmitInfo submit = {
        .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
        .commandBufferCount = 1,
        .pCommandBuffers = &r->cb,
    };
    if (res == VK_SUCCESS) res = dev->api.vkResetFences(dev->device, 1, &r->fence);
    if (res == VK_SUCCESS) res = vulkan_queue_submit(dev, dev->queue, 1, &submit, r->fence);
    if (res == VK_SUCCESS) res = dev->api.vkWaitForFences(dev->device, 1, &r->fence, VK_TRUE, UINT64_MAX);
    vulkan_pipeline_destroy(dev, &pipeline);
    if (res != VK_SUCCESS) {
        fprintf(stderr, "test_integer_vif_vulkan: running the shader failed: %s\n",
                vulkan_result_text(res));
        return -1;
    }
    return 0;
}

/* ---- vif_pixel ------------------------------------------------------------ */

/* The xx (or yy, xy) sum that vif_pixel() rounds to `value`, with random
 * bits below the rounding. */
static uint64_t sum_for(uint32_t value)
{
    return ((uint64_t)value << 16) + (rng() & 0x7fff);
}

/* A case whose means are mu1, mu2 and whose variances and covariance are
 * sigma1_sq, sigma2_sq and sigma12 (as vif_pixel() computes them, modulo
 * 2^32). */
static void make_pixel(uint32_t *in, uint32_t mu1, uint32_t mu2, uint32_t sigma1_sq,
                       uint32_t sigma2_sq, uint32_t sigma12)
{
    const uint32_t mu1_sq = (uint32_t)(((uint64_t)mu1 * mu1 + 2147483648u) >> 32);
    const uint32_t mu2_sq = (uint32_t)(((uint64_t)mu2 * mu2 + 2147483648u) >> 32);
    const uint32_t mu1_mu2 = (uint32_t)(((uint64_t)mu1 * mu2 + 2147483648u) >> 32);
    const uint64_t sums[3] = { sum_for(sigma1_sq + mu1_sq), sum_for(sigma2_sq + mu2_sq),
                               sum_for(sigma12 + mu1_mu2) };
    in[0] = mu1;
    in[1] = mu2;
    for (int k = 0; k < 3; k++) {
        in[2 + 2 * k] = (uint32_t)sums[k];
        in[3 + 2 * k] = (uint32_t)(sums[k] >> 32);
    }
}

/* sigma12 / (sigma1_sq + eps) as the C reference computes it. */
static double reference_quotient(uint32_t sigma12, uint32_t sigma1_sq)
{
    return (double)(int32_t)sigma12 / ((double)(int32_t)sigma1_sq + VIF_EPS);
}

/* Means of every width: those of real pictures are below 2^32. */
static uint32_t rng_mean(void)
{
    return rng_bits(1 + rng() % 32);
}

static uint32_t make_pixel_cases(uint32_t *in, uint32_t capacity)
{
    uint32_t n = 0;
#define ADD(s1, s2, s12) \
    do { if (n < capacity) make_pixel(in + PIXEL_WORDS * n++, rng_mean(), rng_mean(), (s1), (s2), (s12)); } while (0)
    /* Around sigma_nsq, where the log terms start. */
    for (uint32_t s1 = 131070; s1 <= 131075; s1++)
        for (int k = 0; k < 200; k++) ADD(s1, rng_bits(1 + rng() % 31), rng_bits(1 + rng() % 31));
    /* Covariances a small multiple (or fraction) of the variance, at every
     * bit length of the variance, and sigma2_sq at and around the integer
     * part of g * sigma12. */
    static const double ratios[] = { 1, 2, 3, 0.5, 0.25, 1.5, 0.75, 1.0 / 3, 10, 99, 100, 101, 1000 };
    for (unsigned bits = 18; bits <= 31; bits++) {
        for (int k = 0; k < 1500; k++) {
            const uint32_t s1 = rng_bits(bits);
            const double ratio = ratios[rng() % (sizeof(ratios) / sizeof(ratios[0]))];
            double target = floor(s1 * ratio) + (double)((int)(rng() % 5) - 2);
            if (target < 1) target = 1;
            if (target > 2147483647.0) target = 2147483647.0;
            const uint32_t s12 = (uint32_t)target;
            const double g = reference_quotient(s12, s1);
            const double gs = floor(g * (double)s12);
            for (int d = -2; d <= 2; d++) {
                const double v = gs + d;
                if (v >= 1 && v <= 2147483647.0) ADD(s1, (uint32_t)v, s12);
            }
            ADD(s1, rng_bits(1 + rng() % 31), s12);
        }
    }
    /* Random variances and covariances of every width and sign. */
    for (int k = 0; k < 60000; k++) ADD(rng_bits(1 + rng() % 32), rng_bits(1 + rng() % 32), rng_bits(1 + rng() % 32));
#undef ADD
    /* Random sums: whatever wraps, wraps as in the C. */
    while (n < capacity && n < 250000) {
        uint32_t *c = in + PIXEL_WORDS * n++;
        c[0] = rng_mean();
        c[1] = rng_mean();
        for (int w = 0; w < 3; w++) {
            const uint64_t v = rng64() >> (rng() % 40);
            c[2 + 2 * w] = (uint32_t)v;
            c[3 + 2 * w] = (uint32_t)(v >> 32);
        }
    }
    return n;
}

static void check_pixels(Runner *r, const unsigned char *spirv, size_t size, const char *name,
                         const VifState *state, uint32_t count, double gain_limit)
{
    const uint32_t *in = r->inputs.mapped;
    const uint64_t *out = r->outputs.mapped;
    memset(r->outputs.mapped, 0xa5, (size_t)count * 4 * sizeof(uint64_t));
    if (run_cases(r, spirv, size, 0, count, gain_limit)) {
        CHECK(!"the vif_pixel shader ran");
        return;
    }
    uint32_t wrong = 0;
    for (uint32_t i = 0; i < count; i++) {
        const uint32_t *c = in + PIXEL_WORDS * i;
        VifSums sums = { 0, 0, 0, 0 };
        vif_pixel(c[0], c[1], (uint64_t)c[3] << 32 | c[2], (uint64_t)c[5] << 32 | c[4],
                  (uint64_t)c[7] << 32 | c[6], state->log2_table, gain_limit, &sums);
        const uint64_t want[4] = { (uint64_t)sums.num_log, (uint64_t)sums.den_log,
                                   (uint64_t)sums.num_non_log, (uint64_t)sums.den_non_log };
        if (memcmp(want, out + 4 * (size_t)i, sizeof(want))) {
            if (wrong++ < 5)
                fprintf(stderr, "%s, gain limit %g: case %u (mu %u %u, sums %#llx %#llx %#llx): "
                        "%lld %lld %lld %lld, the C gives %lld %lld %lld %lld\n", name, gain_limit, i,
                        c[0], c[1], (unsigned long long)c[3] << 32 | c[2],
                        (unsigned long long)c[5] << 32 | c[4], (unsigned long long)c[7] << 32 | c[6],
                        (long long)out[4 * i], (long long)out[4 * i + 1], (long long)out[4 * i + 2],
                        (long long)out[4 * i + 3], (long long)want[0], (long long)want[1],
                        (long long)want[2], (long long)want[3]);
        }
    }
    printf("%s, gain limit %g: %u cases, %u differ from the C\n", name, gain_limit, count, wrong);
    CHECK(wrong == 0);
}

/* ---- the integers made of the doubles ------------------------------------ */

/* The double steps of vif_pixel() (integer_vif.h) written out, to see
 * their integer results before the log table (which rounds a change of one
 * away in most cases) hides them. */
static void double_steps(int32_t sigma1_sq, int32_t sigma2_sq, int32_t sigma12, double gain_limit,
                         uint32_t *sv_sq, uint64_t *gain_term)
{
    double g = sigma12 / (sigma1_sq + VIF_EPS);
    const int32_t sv = vif_double_to_int32(sigma2_sq - g * sigma12);
    *sv_sq = (uint32_t)(sv > 0 ? sv : 0);
    g = g < gain_limit ? g : gain_limit;
    *gain_term = (uint64_t)(int64_t)(g * g * sigma1_sq);
}

static void add_steps(uint32_t *in, uint32_t *n, uint32_t capacity, uint32_t s1, double s2, uint32_t s12)
{
    if (*n >= capacity || s2 < 1 || s2 > 2147483647.0) return;
    uint32_t *c = in + QUOTIENT_WORDS * (*n)++;
    c[0] = s1;
    c[1] = (uint32_t)s2;
    c[2] = s12;
    c[3] = 0;
}

/*
 * Cases where a rounding decides an integer: g * sigma12 rounds to an
 * integer N from below or above (sigma2_sq = N - 1 .. N + 2 then tells a
 * separate rounding from a fused one), or g * g * sigma1_sq does.  Found
 * by search: for products near 2^30 about one pair in 2^23 is such a case,
 * so sigma12 is taken near sqrt(2^30 sigma1_sq); g * g * sigma1_sq is
 * largest (near 2^36: one in 2^17) with g near 100 and sigma1_sq of 24 bits.
 */
static uint32_t make_step_cases(uint32_t *in, uint32_t capacity)
{
    uint32_t n = 0, sv_hits = 0, gain_hits = 0;
    for (uint32_t trial = 0; trial < 200000000 && n + 8 <= capacity && sv_hits < 24; trial++) {
        const uint32_t s1 = rng_bits(18 + rng() % 14);
        const double centre = sqrt(ldexp((double)s1, 30 - (int)(rng() % 2)));
        const double a = floor(centre * (1 + ((double)rng() / 4294967296.0 - 0.5) / 8));
        if (a < 1 || a > 2147483647.0) continue;
        const uint32_t s12 = (uint32_t)a;
        const double g = reference_quotient(s12, s1);
        const double p = g * (double)s12;
        if (p < 2147483640.0 && p == floor(p) && fma(g, (double)s12, -p) != 0) {
            sv_hits++;
            for (int d = -1; d <= 2; d++) add_steps(in, &n, capacity, s1, p + d, s12);
        }
    }
    for (uint32_t trial = 0; trial < 4000000 && n + 8 <= capacity && gain_hits < 2000; trial++) {
        const uint32_t s1 = rng_bits(24);
        const double a = floor((double)s1 * (50 + 49 * ((double)rng() / 4294967296.0)));
        const uint32_t s12 = (uint32_t)a;
        const double g = reference_quotient(s12, s1);
        const double gg = g * g, w = gg * (double)s1;
        if (w == floor(w) && fma(gg, (double)s1, -w) != 0) {
            gain_hits++;
            add_steps(in, &n, capacity, s1, 1 + rng() % 2147483647u, s12);
        }
    }
    printf("rounding cases found: %u of g * sigma12, %u of g * g * sigma1_sq\n", sv_hits, gain_hits);
    while (n < capacity && n < 150000)
        add_steps(in, &n, capacity, rng_bits(18 + rng() % 14), rng_bits(1 + rng() % 31),
                  rng_bits(1 + rng() % 31));
    return n;
}

static void check_steps(Runner *r, const unsigned char *spirv, size_t size, const char *name,
                        uint32_t count, double gain_limit)
{
    const uint32_t *in = r->inputs.mapped;
    const uint64_t *out = r->outputs.mapped;
    if (run_cases(r, spirv, size, 2, count, gain_limit)) {
        CHECK(!"the double-steps shader ran");
        return;
    }
    uint32_t wrong = 0;
    for (uint32_t i = 0; i < count; i++) {
        const uint32_t *c = in + QUOTIENT_WORDS * i;
        uint32_t sv_sq;
        uint64_t gain_term;
        double_steps((int32_t)c[0], (int32_t)c[1], (int32_t)c[2], gain_limit, &sv_sq, &gain_term);
        if ((uint32_t)out[2 * i] != sv_sq || out[2 * i + 1] != gain_term) {
            if (wrong++ < 5)
                fprintf(stderr, "%s, gain limit %g: sigmas %u %u %u: sv_sq %u, gain %llu; the C "
                        "gives %u, %llu\n", name, gain_limit, c[0], c[1], c[2], (uint32_t)out[2 * i],
                        (unsigned long long)out[2 * i + 1], sv_sq, (unsigned long long)gain_term);
        }
    }
    printf("%s, gain limit %g: %u double steps, %u differ from the C\n", name, gain_limit, count,
           wrong);
    CHECK(wrong == 0);
}

/* ---- the division on its own ------------------------------------------- */

static uint32_t make_quotient_cases(uint32_t *in, uint32_t capacity)
{
    uint32_t n = 0;
    while (n + 16 <= capacity && n < 200000) {
        const uint32_t s1 = rng_bits(18 + rng() % 14);
        uint32_t s12 = rng_bits(1 + rng() % 31);
        if (rng() % 4 == 0) s12 = (uint32_t)fmin(2147483647.0, (double)s1 * (1 + rng() % 8));
        const double q = reference_quotient(s12, s1);
        const uint64_t bits = bitcast_double_bits(q);
        /* A few ulp either way (the loop's reach and past it), then guesses
         * that are far off or not numbers. */
        uint64_t guesses[16];
        unsigned g = 0;
        for (int d = -5; d <= 5; d++) guesses[g++] = bits + (uint64_t)(int64_t)d;
        guesses[g++] = bitcast_double_bits(2 * q);
        guesses[g++] = bitcast_double_bits(q / 3);
        guesses[g++] = 0;                     /* zero */
        guesses[g++] = 0x7ff0000000000000ull; /* infinity */
        guesses[g++] = 0x7ff8000000000000ull; /* NaN */
        for (unsigned k = 0; k < g; k++) {
            uint32_t *c = in + QUOTIENT_WORDS * n++;
            c[0] = s12;
            c[1] = s1;
            c[2] = (uint32_t)guesses[k];
            c[3] = (uint32_t)(guesses[k] >> 32);
        }
    }
    return n;
}

static void check_quotients(Runner *r, uint32_t count)
{
    const uint32_t *in = r->inputs.mapped;
    const uint64_t *out = r->outputs.mapped;
    if (run_cases(r, vulkan_test_integer_vif_native, vulkan_test_integer_vif_native_size, 1, count,
                  VIF_DEFAULT_GAIN_LIMIT)) {
        CHECK(!"the quotient shader ran");
        return;
    }
    uint32_t wrong = 0;
    for (uint32_t i = 0; i < count; i++) {
        const uint32_t *c = in + QUOTIENT_WORDS * i;
        const uint64_t want = bitcast_double_bits(reference_quotient(c[0], c[1]));
        if (out[i] != want && wrong++ < 5)
            fprintf(stderr, "quotient %u / (%u + eps) from guess %.17g: %.17g, IEEE gives %.17g\n",
                    c[0], c[1], bitcast_bits_double((uint64_t)c[3] << 32 | c[2]), bitcast_bits_double(out[i]),
                    bitcast_bits_double(want));
    }
    printf("native division: %u guesses, %u end off the IEEE quotient\n", count, wrong);
    CHECK(wrong == 0);
}

int main(void)
{
    char error[512];
    Runner r;
    memset(&r, 0, sizeof(r));
    int err = vulkan_device_open(&r.dev, -1, error, sizeof(error));
    if (err) {
        printf("skip: %s\n", error);
        return 77;
    }
    VulkanDevice *dev = &r.dev;
    printf("device: %s\n", dev->properties.deviceName);

    static VifState state;
    vif_log2_table_fill(state.log2_table);
    const uint32_t capacity = 250000;
    uint32_t *table = malloc(VIF_VULKAN_TABLE_WORDS * sizeof(uint32_t));
    if (!table) return 1;
    vif_vulkan_table(state.log2_table, table);
    const VkBufferUsageFlags usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
    err = vulkan_buffer_create(dev, VIF_VULKAN_TABLE_WORDS * sizeof(uint32_t), usage, true, &r.table,
                               "the table", error, sizeof(error));
    if (!err)
        err = vulkan_buffer_create(dev, (VkDeviceSize)capacity * PIXEL_WORDS * sizeof(uint32_t), usage,
                                   true, &r.inputs, "the cases", error, sizeof(error));
    if (!err)
        err = vulkan_buffer_create(dev, (VkDeviceSize)capacity * 4 * sizeof(uint64_t), usage, true,
                                   &r.outputs, "the results", error, sizeof(error));
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
    if (!err && dev->api.vkAllocateCommandBuffers(dev->device, &cb_info, &r.cb) != VK_SUCCESS) err = -EIO;
    const VkFenceCreateInfo fence_info = { .sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO };
    if (!err && dev->api.vkCreateFence(dev->device, &fence_info, NULL, &r.fence) != VK_SUCCESS) err = -EIO;
    CHECK(err == 0);
    if (err) {
        fprintf(stderr, "test_integer_vif_vulkan: setting up failed (%s)\n", error);
    } else {
        memcpy(r.table.mapped, table, VIF_VULKAN_TABLE_WORDS * sizeof(uint32_t));
        const bool native = dev->features.shaderFloat64 && dev->features.shaderInt64;
        const uint32_t pixels = make_pixel_cases(r.inputs.mapped, capacity);
        static const double limits[2] = { VIF_DEFAULT_GAIN_LIMIT, 1.0 };
        for (unsigned k = 0; k < 2; k++) {
            check_pixels(&r, vulkan_test_integer_vif, vulkan_test_integer_vif_size, "emulated doubles",
                         &state, pixels, limits[k]);
            if (native)
                check_pixels(&r, vulkan_test_integer_vif_native, vulkan_test_integer_vif_native_size,
                             "native doubles", &state, pixels, limits[k]);
        }
        const uint32_t steps = make_step_cases(r.inputs.mapped, capacity);
        for (unsigned k = 0; k < 2; k++) {
            check_steps(&r, vulkan_test_integer_vif, vulkan_test_integer_vif_size, "emulated doubles",
                        steps, limits[k]);
            if (native)
                check_steps(&r, vulkan_test_integer_vif_native, vulkan_test_integer_vif_native_size,
                            "native doubles", steps, limits[k]);
        }
        if (native)
            check_quotients(&r, make_quotient_cases(r.inputs.mapped, capacity));
        else
            printf("the device lacks shaderFloat64 or shaderInt64: native doubles not tested\n");
    }
    free(table);
    if (r.fence) dev->api.vkDestroyFence(dev->device, r.fence, NULL);
    if (r.pool) dev->api.vkDestroyCommandPool(dev->device, r.pool, NULL);
    vulkan_buffer_destroy(dev, &r.table);
    vulkan_buffer_destroy(dev, &r.inputs);
    vulkan_buffer_destroy(dev, &r.outputs);
    vulkan_device_close(dev);
    return test_summary();
}
