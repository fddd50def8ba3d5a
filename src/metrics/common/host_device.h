/*
 * HOST_DEVICE_INLINE: the storage of a function that a metric's header
 * shares with its CUDA twin.  nvcc compiles it for the host and the
 * device; the C compilers see a plain static inline function (marked
 * unused: a file that includes the header for its other parts need not
 * call it).
 */
#ifndef QUALE_SRC_METRICS_HOST_DEVICE_H
#define QUALE_SRC_METRICS_HOST_DEVICE_H

#if defined(__CUDACC__)
#define HOST_DEVICE_INLINE static inline __host__ __device__
#elif defined(__GNUC__)
#define HOST_DEVICE_INLINE static inline __attribute__((unused))
#else
#define HOST_DEVICE_INLINE static inline
#endif

#endif /* QUALE_SRC_METRICS_HOST_DEVICE_H */
