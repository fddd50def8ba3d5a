/*
 * The SAD kernel of integer motion, for one sample type: the C entry of the
 * MotionDsp table (integer_motion.h).  Included by integer_motion.c once per
 * instantiation, with:
 *   MOTION_PIXEL   the sample type (uint8_t, uint16_t)
 *   MOTION_ACC     the type of the vertical sums: int32_t for 8-bit
 *                  samples (|sum| <= 65536 * 255), int64_t for 16-bit ones
 *                  (|sum| <= 65536 * 65535)
 *   MOTION_NAME    the function's name
 *
 * What it computes, for pictures a (earlier) and b (current) of w x h:
 *   d      = a - b, sample by sample
 *   v[x]   = (sum_k f[k] * d[mirror(y - 2 + k)][x] + 2^(bd-1)) >> bd
 *   u[x]   = (sum_k f[k] * v[mirror(x - 2 + k)]   + 2^15)     >> 16
 *   SAD    = sum over the picture of |u|
 * with f = {3571, 16004, 26386, 16004, 3571} (sum 65536) and bd the bit
 * depth (8 for 8-bit video, so one formula serves every depth), and
 * mirror(i) = -i below 0, 2 * size - i - 2 past the end: a reflection
 * that does not repeat the edge sample.  Every product and sum is exact,
 * so grouping the symmetric taps changes nothing.
 *
 * v holds w + 4 entries: the row itself at v[2 .. w + 1] and its mirror
 * images on either side, so the horizontal pass needs no edge cases.
 * Needs w >= 3 and h >= 3 (the mirror steps one sample inside the edge).
 */

uint64_t MOTION_NAME(const void *a_data, ptrdiff_t a_stride, const void *b_data,
                     ptrdiff_t b_stride, unsigned w, unsigned h, unsigned bitdepth,
                     void *row_buffer)
{
    int32_t *restrict v = row_buffer;
    const MOTION_ACC v_round = (MOTION_ACC)1 << (bitdepth - 1);
    uint64_t sad = 0;

    for (unsigned y = 0; y < h; y++) {
        const MOTION_PIXEL *a[5], *b[5];
        for (int k = 0; k < 5; k++) {
            const unsigned r = motion_mirror((int)y - 2 + k, h);
            a[k] = (const MOTION_PIXEL *)((const uint8_t *)a_data + (ptrdiff_t)r * a_stride);
            b[k] = (const MOTION_PIXEL *)((const uint8_t *)b_data + (ptrdiff_t)r * b_stride);
        }

        /* vertical: the filtered difference of this row */
        int32_t *restrict row = v + 2;
        int32_t nonzero = 0;
        for (unsigned x = 0; x < w; x++) {
            const MOTION_ACC outer = (MOTION_ACC)(a[0][x] - b[0][x]) + (a[4][x] - b[4][x]);
            const MOTION_ACC inner = (MOTION_ACC)(a[1][x] - b[1][x]) + (a[3][x] - b[3][x]);
            const MOTION_ACC centre = (MOTION_ACC)(a[2][x] - b[2][x]);
            const MOTION_ACC sum = MOTION_TAP0 * outer + MOTION_TAP1 * inner + MOTION_TAP2 * centre;
            row[x] = (int32_t)((sum + v_round) >> bitdepth);
            nonzero |= row[x];
        }
        /* A row of zeros filters to zeros: nothing to add. */
        if (!nonzero) continue;

        v[1] = row[1];
        v[0] = row[2];
        row[w] = row[w - 2];
        row[w + 1] = row[w - 3];

        /* horizontal, then |.|.  The row sum is 32-bit as in libvmaf: with
         * samples inside the bit depth |u| < 65536 and our widths (<= 32768)
         * never wrap it; samples above it wrap it the way libvmaf does. */
        uint32_t row_sad = 0;
        for (unsigned x = 0; x < w; x++) {
            /* v[x + 2] is the centre sample */
            const int64_t sum = (int64_t)MOTION_TAP0 * (v[x] + v[x + 4]) +
                                (int64_t)MOTION_TAP1 * (v[x + 1] + v[x + 3]) +
                                (int64_t)MOTION_TAP2 * v[x + 2];
            const int32_t u = (int32_t)((sum + (1 << 15)) >> 16);
            row_sad += (uint32_t)(u < 0 ? -u : u);
        }
        sad += row_sad;
    }
    return sad;
}
