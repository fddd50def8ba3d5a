/*
 * The kernels' lane helpers (src/cuda/lanes.cuh) and block sums
 * (src/cuda/reduce.cuh) as they are compiled for AMD GPUs, run on the CPU
 * on an emulated GPU with 64-lane wavefronts: each GPU thread is a host
 * thread, a wavefront's shuffles and ballots exchange through memory
 * between barriers of its 64 threads, and __syncthreads() is a barrier of
 * the block.  HIP's own semantics are emulated: __shfl_down(v, d, width)
 * reads lane + d when it lies in the caller's width-wide segment (else the
 * caller's own value), __ballot() gives all 64 votes, __lane_id() is the
 * lane in the wavefront.
 *
 * What must hold, bit for bit: every 32-lane group gets the result a
 * 32-lane NVIDIA warp gets (the shuffle tree's order, checked on doubles
 * and floats, whose sums depend on it), a ballot gives the votes of the
 * thread's own group in bits 0 to 31, and block_sum() gives the block's
 * sum for blocks of 32 to 1024 threads.  A ballot not cut to the thread's
 * half, or shuffles 64 lanes wide (block_sum's last step, which only the
 * first group runs, then waits for lanes that never come), fail here.
 */
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

#include "test.h"

/* ---- the emulated GPU ------------------------------------------------------ */

enum { WAVE = 64, MAX_THREADS = 1024 };

struct Dim3 {
    unsigned x, y, z;
};

static thread_local Dim3 threadIdx;
static Dim3 blockDim;

static pthread_barrier_t block_barrier;
static pthread_barrier_t wave_barriers[MAX_THREADS / WAVE];
/* A shuffle of width 32 involves its 32-lane segment only: kernels call
 * one where only some groups of a wavefront run (block_sum's last step). */
static pthread_barrier_t half_barriers[MAX_THREADS / 32];
static uint64_t wave_slots[MAX_THREADS];    /* each lane's offered value */
static uint64_t wave_votes[MAX_THREADS / WAVE];

static unsigned my_lane() { return threadIdx.x % WAVE; }
static unsigned my_wave() { return threadIdx.x / WAVE; }
static void wave_sync() { pthread_barrier_wait(&wave_barriers[my_wave()]); }
static void segment_sync(int width)
{
    if (width == WAVE)
        wave_sync();
    else
        pthread_barrier_wait(&half_barriers[threadIdx.x / 32]);
}

static void __syncthreads() { pthread_barrier_wait(&block_barrier); }
static unsigned __lane_id() { return my_lane(); }

template <typename T>
static T __shfl_down(T v, unsigned offset, int width)
{
    static_assert(sizeof(T) <= sizeof(uint64_t), "a lane's value fits a slot");
    uint64_t bits = 0;
    memcpy(&bits, &v, sizeof(T));
    wave_slots[threadIdx.x] = bits;
    segment_sync(width);
    const unsigned lane = my_lane(), segment = lane / (unsigned)width;
    const unsigned from = lane + offset;
    T out = v;
    if (from / (unsigned)width == segment && from < WAVE)
        memcpy(&out, &wave_slots[my_wave() * WAVE + from], sizeof(T));
    segment_sync(width);
    return out;
}

template <typename T>
static T __shfl_up(T v, unsigned offset, int width)
{
    uint64_t bits = 0;
    memcpy(&bits, &v, sizeof(T));
    wave_slots[threadIdx.x] = bits;
    segment_sync(width);
    const unsigned lane = my_lane(), segment = lane / (unsigned)width;
    T out = v;
    if (lane >= offset && (lane - offset) / (unsigned)width == segment)
        memcpy(&out, &wave_slots[my_wave() * WAVE + lane - offset], sizeof(T));
    segment_sync(width);
    return out;
}

static uint64_t __ballot(int vote)
{
    if (my_lane() == 0) wave_votes[my_wave()] = 0;
    wave_sync();
    if (vote) __atomic_fetch_or(&wave_votes[my_wave()], uint64_t(1) << my_lane(), __ATOMIC_RELAXED);
    wave_sync();
    const uint64_t all = wave_votes[my_wave()];
    wave_sync();
    return all;
}

/* Runs body on every thread of one block of n threads (a multiple of 64). */
static void run_block(unsigned n, const std::function<void()> &body)
{
    blockDim = { n, 1, 1 };
    pthread_barrier_init(&block_barrier, nullptr, n);
    for (unsigned w = 0; w < n / WAVE; w++) pthread_barrier_init(&wave_barriers[w], nullptr, WAVE);
    for (unsigned h = 0; h < n / 32; h++) pthread_barrier_init(&half_barriers[h], nullptr, 32);
    std::vector<std::thread> threads;
    for (unsigned t = 0; t < n; t++)
        threads.emplace_back([t, &body] {
            threadIdx = { t, 0, 0 };
            body();
        });
    for (auto &t : threads) t.join();
    for (unsigned w = 0; w < n / WAVE; w++) pthread_barrier_destroy(&wave_barriers[w]);
    for (unsigned h = 0; h < n / 32; h++) pthread_barrier_destroy(&half_barriers[h]);
    pthread_barrier_destroy(&block_barrier);
}

/* The kernels' headers, compiled as hipcc compiles them for AMD. */
#define __HIP_PLATFORM_AMD__ 1
#define __device__
#define __forceinline__ inline
#define __shared__ static
#include "gpu/cuda/lanes.cuh"
#include "gpu/cuda/reduce.cuh"

/* ---- what a 32-lane NVIDIA warp computes ----------------------------------- */

/* Lane 0's warp_sum() of 32 values: the shuffle tree, in its order. */
template <typename T>
static T warp_tree(const T *v)
{
    T lanes[32];
    for (int i = 0; i < 32; i++) lanes[i] = v[i];
    for (int offset = 16; offset > 0; offset >>= 1) {
        T next[32];
        for (int i = 0; i < 32; i++) next[i] = lanes[i] + (i + offset < 32 ? lanes[i + offset] : lanes[i]);
        memcpy(lanes, next, sizeof(lanes));
    }
    return lanes[0];
}

static uint64_t next_random(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* ---- the checks -------------------------------------------------------------- */

template <typename T>
static void check_warp_sums(unsigned n, uint64_t seed, const char *what)
{
    std::vector<T> values(n), got(n);
    for (unsigned i = 0; i < n; i++) {
        const double u = (double)(next_random(&seed) >> 11) / 9007199254740992.0;
        values[i] = (T)((u - 0.3) * std::pow(10.0, (double)(i % 13) - 4.0));
    }
    run_block(n, [&] { got[threadIdx.x] = warp_sum(values[threadIdx.x]); });
    unsigned wrong = 0;
    for (unsigned g = 0; g < n / 32; g++) {
        const T want = warp_tree(&values[g * 32]);
        if (memcmp(&want, &got[g * 32], sizeof(T))) wrong++;
    }
    if (wrong) fprintf(stderr, "%s, %u threads: %u groups differ from a 32-lane warp\n", what, n, wrong);
    CHECK(wrong == 0);
}

static void check_ballots(unsigned n, uint64_t seed)
{
    std::vector<int> votes(n);
    std::vector<unsigned> got(n);
    for (unsigned i = 0; i < n; i++) votes[i] = (int)(next_random(&seed) & 1);
    run_block(n, [&] { got[threadIdx.x] = lanes_ballot(votes[threadIdx.x] != 0); });
    unsigned wrong = 0;
    for (unsigned t = 0; t < n; t++) {
        unsigned want = 0;
        for (unsigned l = 0; l < 32; l++) want |= (unsigned)votes[(t & ~31u) + l] << l;
        if (got[t] != want) wrong++;
    }
    if (wrong) fprintf(stderr, "ballots, %u threads: %u lanes see another group's votes\n", n, wrong);
    CHECK(wrong == 0);
}

static void check_shfl_up(unsigned n)
{
    std::vector<int> got(n);
    run_block(n, [&] { got[threadIdx.x] = lanes_shfl_up((int)threadIdx.x, 3); });
    unsigned wrong = 0;
    for (unsigned t = 0; t < n; t++)
        if (got[t] != (int)((t & 31) >= 3 ? t - 3 : t)) wrong++;
    CHECK(wrong == 0);
}

static void check_block_sum(unsigned n, uint64_t seed)
{
    std::vector<int64_t> values(n);
    int64_t want = 0;
    for (unsigned i = 0; i < n; i++) {
        values[i] = (int64_t)(next_random(&seed) >> 20) - ((int64_t)1 << 43);
        want += values[i];
    }
    int64_t got = 0;
    run_block(n, [&] {
        const int64_t s = block_sum(values[threadIdx.x]);
        if (threadIdx.x == 0) got = s;
    });
    if (got != want)
        fprintf(stderr, "block_sum, %u threads: %lld, expected %lld\n", n, (long long)got,
                (long long)want);
    CHECK(got == want);
}

/* A shuffle wider than 32 lanes where only some groups of a wavefront run
 * it (block_sum's last step) waits for lanes that never come: said, not
 * hung. */
static void stuck(int)
{
    static const char message[] = "a block did not finish: a shuffle or ballot waited for "
                                  "lanes that do not run it (wider than 32 lanes?)\n";
    if (write(2, message, sizeof(message) - 1) < 0) _exit(1);
    _exit(1);
}

int main()
{
    signal(SIGALRM, stuck);
    alarm(60);
    for (unsigned n : { 64u, 128u, 256u, 1024u }) {
        check_warp_sums<double>(n, 0x9e3779b97f4a7c15ull + n, "double warp sums");
        check_warp_sums<float>(n, 0x2545f4914f6cdd1dull + n, "float warp sums");
        check_warp_sums<int64_t>(n, 0x1234567ull + n, "int64 warp sums");
        check_ballots(n, 0xdeadbeefull + n);
        check_shfl_up(n);
        check_block_sum(n, 0x5bd1e995ull + n);
    }
    return test_summary();
}
