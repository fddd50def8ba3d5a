/*
 * A model's prediction, as libvmaf's predict.c and libsvm's svm.cpp make
 * it, in the same order of operations in double (model.c's header says
 * the steps).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "model_private.h"

/* libsvm's svm_predict() for an RBF nu-SVR: the kernel sums squared
 * differences in index order, the decision function adds coef * kernel in
 * support-vector order, then subtracts rho. */
static double svm_predict(const ModelSvmDesc *svm, const double *x)
{
    double sum = 0.0;
    for (unsigned s = 0; s < svm->sv_count; s++) {
        const double *v = svm->sv + (size_t)s * svm->dimension;
        double distance = 0.0;
        for (unsigned k = 0; k < svm->dimension; k++) {
            const double d = x[k] - v[k];
            distance += d * d;
        }
        sum += svm->coef[s] * exp(-svm->gamma * distance);
    }
    sum -= svm->rho;
    return sum;
}

/* The prediction before transform and clip. */
/*
 * libvmaf's post_process_feature_from_another(): the speed_chroma input
 * taken back out of its normalisation; where that is exactly 0, the input
 * becomes c (1 - adm3) (adm3 also taken back out of its normalisation,
 * which need not give its value back bit for bit), normalised again.
 */
static void correct_chroma(const ModelDesc *d, double *x)
{
    const unsigned g = d->chroma_guided, a = d->chroma_guiding;
    const bool linear = d->norm == MODEL_NORM_LINEAR_RESCALE;
    double guided = x[g], guiding = x[a];
    if (linear) {
        guided = (guided - d->intercepts[g + 1]) / d->slopes[g + 1];
        guiding = (guiding - d->intercepts[a + 1]) / d->slopes[a + 1];
    }
    if (guided != 0.0) return;
    const double c = d->chroma_correction_parameter;
    double corrected = (-c * guiding) + c;
    if (linear) corrected = d->slopes[g + 1] * corrected + d->intercepts[g + 1];
    x[g] = corrected;
}

static double predict_raw(const ModelPart *part, const double *inputs)
{
    const ModelDesc *d = part->desc;
    double x[MODEL_MAX_FEATURES];
    for (unsigned i = 0; i < d->feature_count; i++) {
        double v = inputs[part->input[i]];
        if (d->norm == MODEL_NORM_LINEAR_RESCALE)
            v = d->slopes[i + 1] * v + d->intercepts[i + 1];
        x[i] = v;
    }
    if (d->chroma_correction) correct_chroma(d, x);
    double y = svm_predict(&d->svm, x);
    if (d->norm == MODEL_NORM_LINEAR_RESCALE)
        y = (y - d->intercepts[0]) / d->slopes[0];
    return y;
}

/* libvmaf's find_linear_function_parameters() for a knot segment that is
 * neither horizontal nor vertical (validated at load). */
static void segment_line(ModelKnot a, ModelKnot b, double *slope, double *offset)
{
    if (b.x - a.x == 0 || b.y - a.y == 0) {
        *slope = 1.0;
        *offset = 0.0;
    } else if (a.x == 0) {
        *offset = a.y;
        *slope = (b.y - *offset) / b.x;
    } else {
        *slope = (b.y - a.y) / (b.x - a.x);
        *offset = a.y - (a.x * (*slope));
    }
}

/* libvmaf's piecewise_linear_mapping(): every segment is visited and the
 * last one that claims x wins, so a shared knot takes the later segment's
 * value; outside the knots the first and last segments extend. */
static double piecewise_linear(double x, const ModelKnot *k, unsigned n, double y_in)
{
    if (n <= 1) return y_in; /* libvmaf leaves the value as it was */
    double y = 0.0;
    for (unsigned i = 0; i + 1 < n; i++) {
        const bool from = k[i].x <= x;
        const bool to = x <= k[i + 1].x;
        const bool below = i == 0 && x < k[i].x;
        const bool above = i + 2 == n && x > k[i + 1].x;
        if (k[i].y == k[i + 1].y) {
            if ((from && to) || below || above) y = k[i].y;
        } else {
            double slope, offset;
            segment_line(k[i], k[i + 1], &slope, &offset);
            if ((from && to) || below || above) y = slope * x + offset;
        }
    }
    return y;
}

/* libvmaf's transform(): polynomial, then knots, then rectification
 * against the untransformed score. */
static double transform_score(const ModelPart *part, double y_in)
{
    if (!part->transform) return y_in;
    const ModelTransformDesc *t = &part->desc->transform;
    double y_out;
    if (t->p_enabled[0] || t->p_enabled[1] || t->p_enabled[2]) {
        y_out = 0.;
        if (t->p_enabled[0]) y_out += t->p[0];
        if (t->p_enabled[1]) y_out += t->p[1] * y_in;
        if (t->p_enabled[2]) y_out += t->p[2] * y_in * y_in;
    } else {
        y_out = y_in;
    }
    if (t->knots_enabled)
        y_out = piecewise_linear(y_out, t->knots, t->knot_count, y_out);
    if (t->out_lte_in) y_out = (y_out > y_in) ? y_in : y_out;
    if (t->out_gte_in) y_out = (y_out < y_in) ? y_in : y_out;
    return y_out;
}

static double clip_score(const ModelPart *part, double y)
{
    if (!part->clip) return y;
    const ModelDesc *d = part->desc;
    y = (y < d->clip_min) ? d->clip_min : y;
    y = (y > d->clip_max) ? d->clip_max : y;
    return y;
}

static double finish(const ModelPart *part, double y)
{
    return clip_score(part, transform_score(part, y));
}

static int compare_scores(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    if (x > y) return 1;
    if (x < y) return -1;
    return 0;
}

/* libvmaf's percentile(): linear between the two nearest ranks. */
static double percentile(const double *sorted, unsigned n, double perc)
{
    const double p = perc * (n - 1) / 100.;
    const int lo = (int)floor(p);
    const int hi = (int)ceil(p);
    return (lo == hi) ? sorted[lo]
                      : sorted[lo] * (hi - p) + sorted[hi] * (p - lo);
}

int model_predict_features(const Model *m, const double *inputs, double *outputs)
{
    if (!m || !inputs || !outputs) return -EINVAL;

    outputs[0] = finish(&m->parts[0], predict_raw(&m->parts[0], inputs));
    if (!m->collection) return 0;

    /*
     * libvmaf's bootstrap (vmaf_bootstrap_predict_score_at_index): each
     * bootstrap model's score is written transformed and clipped, while the
     * statistics use the raw scores; the mean and the 95% interval are then
     * transformed and clipped with the first bootstrap model's settings, and
     * the standard deviation is scaled by the transform's slope at the mean.
     */
    const unsigned n = m->part_count - 1;
    double raw[MODEL_MAX_PARTS];
    for (unsigned i = 0; i < n; i++) {
        const ModelPart *part = &m->parts[1 + i];
        raw[i] = predict_raw(part, inputs);
        outputs[1 + i] = finish(part, raw[i]);
    }

    double sum = 0.;
    for (unsigned i = 0; i < n; i++) sum += raw[i];
    const double mean = sum / n;

    const double delta = 0.01;
    double plus_delta = mean + delta;
    double minus_delta = mean - delta;

    double ssd = 0.;
    for (unsigned i = 0; i < n; i++) ssd += pow(raw[i] - mean, 2);
    double stddev = sqrt(ssd / n);

    qsort(raw, n, sizeof(raw[0]), compare_scores);
    double lo = percentile(raw, n, 2.5);
    double hi = percentile(raw, n, 97.5);

    const ModelPart *first = &m->parts[1];
    const double bagging = finish(first, mean);
    lo = finish(first, lo);
    hi = finish(first, hi);
    plus_delta = finish(first, plus_delta);
    minus_delta = finish(first, minus_delta);
    const double slope = (plus_delta - minus_delta) / (2.0 * delta);
    stddev *= slope;

    outputs[m->part_count + 0] = bagging;
    outputs[m->part_count + 1] = stddev;
    outputs[m->part_count + 2] = lo;
    outputs[m->part_count + 3] = hi;
    return 0;
}
