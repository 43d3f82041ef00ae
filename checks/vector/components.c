/* Strongly connected components of an explored state graph kept as compressed sparse rows
 * (checks/vector/graph.py): the edges leaving state v are offsets[v] up to offsets[v + 1], edge e
 * goes to targets[e]. Tarjan's algorithm, iteratively (an explicit call stack: no recursion depth
 * limit), over the states where within[v] is non-zero (every state when within is NULL), using only
 * edges between such states. About 24 bytes per state while it runs, nothing per edge.
 *
 * strong_components writes label[v] (the component of v, numbered in the order Tarjan completes
 * them; -1 for a state outside within) and returns the number of components, or -1 when memory
 * runs out. inside_edges writes the ascending indices of the edges whose source and target have
 * the same label >= 0 (out NULL: only counts them), sets looping[c] for a component with a
 * self-loop (looping NULL: not), and returns the number of such edges.
 */
#include <stdint.h>
#include <stdlib.h>

#define IN(v) (within == NULL || within[v])

int64_t strong_components(int64_t n, const int64_t *offsets, const int32_t *targets, const uint8_t *within,
                          int32_t *label) {
    int32_t *index = malloc(sizeof(int32_t) * (n ? n : 1));
    int32_t *low = malloc(sizeof(int32_t) * (n ? n : 1));
    int32_t *stack = malloc(sizeof(int32_t) * (n ? n : 1));
    int32_t *call = malloc(sizeof(int32_t) * (n ? n : 1));
    int64_t *next = malloc(sizeof(int64_t) * (n ? n : 1));
    if (!index || !low || !stack || !call || !next) {
        free(index); free(low); free(stack); free(call); free(next);
        return -1;
    }
    for (int64_t v = 0; v < n; v++) {
        index[v] = -1;
        label[v] = -1;
    }
    int32_t counter = 0, components = 0;
    int64_t depth = 0, height = 0; /* call stack depth, Tarjan stack height */
    for (int64_t root = 0; root < n; root++) {
        if (!IN(root) || index[root] >= 0) continue;
        index[root] = low[root] = counter++;
        stack[height++] = (int32_t)root;
        call[0] = (int32_t)root;
        next[0] = offsets[root];
        depth = 1;
        while (depth > 0) {
            int32_t v = call[depth - 1];
            int64_t e = next[depth - 1];
            if (e < offsets[v + 1]) {
                next[depth - 1] = e + 1;
                int32_t w = targets[e];
                if (!IN(w)) continue;
                if (index[w] < 0) {
                    index[w] = low[w] = counter++;
                    stack[height++] = w;
                    call[depth] = w;
                    next[depth] = offsets[w];
                    depth++;
                } else if (label[w] < 0 && index[w] < low[v]) { /* on the stack */
                    low[v] = index[w];
                }
                continue;
            }
            if (low[v] == index[v]) { /* v roots a component: pop it */
                int32_t w;
                do {
                    w = stack[--height];
                    label[w] = components;
                } while (w != v);
                components++;
            }
            depth--;
            if (depth > 0) {
                int32_t u = call[depth - 1];
                if (low[v] < low[u]) low[u] = low[v];
            }
        }
    }
    free(index); free(low); free(stack); free(call); free(next);
    return components;
}

int64_t inside_edges(int64_t n, const int64_t *offsets, const int32_t *targets, const int32_t *label, int32_t *out,
                     uint8_t *looping) {
    int64_t count = 0;
    for (int64_t v = 0; v < n; v++) {
        int32_t c = label[v];
        if (c < 0) continue;
        for (int64_t e = offsets[v]; e < offsets[v + 1]; e++) {
            if (label[targets[e]] == c) {
                if (out != NULL) out[count] = (int32_t)e;
                if (looping != NULL && targets[e] == v) looping[c] = 1;
                count++;
            }
        }
    }
    return count;
}

/* Weak fairness per component (checks/engines/liveness.py): unfair[c] = 1 when, for the lasting
 * component c, some fair action kind has an edge leaving every state of c (a state has at most one
 * edge per action instance, so counting states with such an edge counts enabledness) and no edge of
 * that kind stays inside c. kinds holds kind_bytes (2 or 4) per edge; fair[k] marks fair kinds;
 * size[c] the states of c. Components are visited one at a time through a counting sort of the
 * states by label: 4 bytes per state and per component, 20 per kind while it runs. Returns 0, or -1 when memory
 * runs out. */
int64_t unfair_components(int64_t n, const int64_t *offsets, const int32_t *targets, const void *kinds,
                          int64_t kind_bytes, const int32_t *label, int64_t count, const uint8_t *lasting,
                          const int32_t *size, const uint8_t *fair, int64_t kind_count, uint8_t *unfair) {
    int32_t *start = calloc((size_t)count + 1, sizeof(int32_t));
    int32_t *order = malloc(sizeof(int32_t) * (n ? n : 1));
    int64_t *states = malloc(sizeof(int64_t) * (kind_count ? kind_count : 1));
    int64_t *stamp = malloc(sizeof(int64_t) * (kind_count ? kind_count : 1));
    uint8_t *taken = malloc(kind_count ? kind_count : 1);
    int32_t *touched = malloc(sizeof(int32_t) * (kind_count ? kind_count : 1));
    if (!start || !order || !states || !stamp || !taken || !touched) {
        free(start); free(order); free(states); free(stamp); free(taken); free(touched);
        return -1;
    }
    for (int64_t v = 0; v < n; v++)
        if (label[v] >= 0 && lasting[label[v]]) start[label[v] + 1]++;
    for (int64_t c = 0; c < count; c++) start[c + 1] += start[c];
    for (int64_t v = 0; v < n; v++)
        if (label[v] >= 0 && lasting[label[v]]) order[start[label[v]]++] = (int32_t)v;
    for (int64_t c = count; c > 0; c--) start[c] = start[c - 1]; /* back to each component's first slot */
    start[0] = 0;
    for (int64_t k = 0; k < kind_count; k++) stamp[k] = -1;
    for (int64_t c = 0; c < count; c++) {
        unfair[c] = 0;
        if (!lasting[c]) continue;
        int64_t touches = 0;
        for (int64_t i = start[c]; i < (int64_t)start[c + 1]; i++) {
            int32_t v = order[i];
            for (int64_t e = offsets[v]; e < offsets[v + 1]; e++) {
                int64_t k = kind_bytes == 2 ? ((const int16_t *)kinds)[e] : ((const int32_t *)kinds)[e];
                if (!fair[k]) continue;
                if (stamp[k] != c) {
                    stamp[k] = c;
                    states[k] = 0;
                    taken[k] = 0;
                    touched[touches++] = (int32_t)k;
                }
                states[k]++;
                if (label[targets[e]] == c) taken[k] = 1;
            }
        }
        for (int64_t t = 0; t < touches; t++) {
            int32_t k = touched[t];
            if (states[k] == size[c] && !taken[k]) {
                unfair[c] = 1;
                break;
            }
        }
    }
    free(start); free(order); free(states); free(stamp); free(taken); free(touched);
    return 0;
}
