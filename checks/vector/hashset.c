/* The visited set of the compiled vector core (checks/vector/visited.py): every state seen, exactly.
 *
 * A state is `words` 64-bit words (checks/vector/layout.py). The set keeps every state's words in
 * one array, indexed by the state's id (ids are given in insertion order), and an open-addressing
 * hash table (linear probing, at most 5/8 full):
 *   - a one-word state is its own key: a slot holds the word and the id (16 bytes), and a lookup
 *     touches one slot per probe;
 *   - a larger state: a slot holds 32 bits of the state's hash and the id (8 bytes); where the hash
 *     bits match, the state's words are compared.
 * Either way the set is exact: no fingerprint is trusted alone. Memory per state: its words, and
 * the table (at most 16 / (5/16) = 26 bytes, or 13 for larger states).
 *
 * visited_insert() takes a batch of states in order; each one is either found or added (a new id),
 * so the first occurrence of a state in the batch is the one added: the breadth-first numbering of
 * the interpreted search. Past `limit` states nothing more is added (a state budget).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int64_t words;      /* 64-bit words per state */
    uint64_t *states;   /* count x words */
    int64_t count, room;
    uint64_t *slots;    /* one word: (word, id + 1) pairs; larger: (hash >> 32) << 32 | (id + 1); 0 id = empty */
    int64_t mask;       /* slots - 1 (a power of two) */
} visited_t;

static uint64_t mix(uint64_t x) {
    x ^= x >> 30; x *= 0xBF58476D1CE4E5B9ULL;
    x ^= x >> 27; x *= 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

static uint64_t hash(const uint64_t *w, int64_t words) {
    uint64_t h = 0x9E3779B97F4A7C15ULL;
    for (int64_t i = 0; i < words; i++) h = mix(h ^ (w[i] + 0x9E3779B97F4A7C15ULL * (uint64_t)(i + 1)));
    return h;
}

static int64_t slot_words(const visited_t *v) { return v->words == 1 ? 2 : 1; }

visited_t *visited_new(int64_t words) {
    visited_t *v = calloc(1, sizeof(visited_t));
    if (!v) return NULL;
    v->words = words;
    v->room = 1024;
    v->states = malloc(sizeof(uint64_t) * v->room * words);
    v->mask = (1 << 12) - 1;
    v->slots = calloc((v->mask + 1) * slot_words(v), sizeof(uint64_t));
    if (!v->states || !v->slots) return NULL;
    return v;
}

void visited_free(visited_t *v) {
    if (!v) return;
    free(v->states);
    free(v->slots);
    free(v);
}

/* Put id into the first empty slot of its probe sequence in `slots` (size - 1 = mask). */
static void place(const visited_t *v, uint64_t *slots, int64_t mask, int64_t id) {
    const uint64_t *state = v->states + id * v->words;
    uint64_t full = hash(state, v->words), h = full & mask;
    if (v->words == 1) {
        while (slots[2 * h + 1]) h = (h + 1) & mask;
        slots[2 * h] = state[0];
        slots[2 * h + 1] = (uint64_t)(id + 1);
    } else {
        while (slots[h]) h = (h + 1) & mask;
        slots[h] = (full & 0xFFFFFFFF00000000ULL) | (uint64_t)(id + 1);
    }
}

static int grow_slots(visited_t *v) {
    int64_t size = (v->mask + 1) * 2;
    uint64_t *slots = calloc(size * slot_words(v), sizeof(uint64_t));
    if (!slots) return -1;
    for (int64_t id = 0; id < v->count; id++) place(v, slots, size - 1, id);
    free(v->slots);
    v->slots = slots;
    v->mask = size - 1;
    return 0;
}

static int grow_states(visited_t *v) {
    int64_t room = v->room * 2;
    uint64_t *states = realloc(v->states, sizeof(uint64_t) * room * v->words);
    if (!states) return -1;
    v->states = states;
    v->room = room;
    return 0;
}

/* The id of `row`, or -1 with *at set to the empty slot where it would go. */
static int64_t lookup(const visited_t *v, const uint64_t *row, int64_t *at) {
    uint64_t full = hash(row, v->words), h = full & v->mask;
    if (v->words == 1) {
        while (v->slots[2 * h + 1]) {
            if (v->slots[2 * h] == row[0]) return (int64_t)v->slots[2 * h + 1] - 1;
            h = (h + 1) & v->mask;
        }
    } else {
        uint64_t high = full & 0xFFFFFFFF00000000ULL;
        while (v->slots[h]) {
            uint64_t slot = v->slots[h];
            int64_t id = (int64_t)(slot & 0xFFFFFFFFULL) - 1;
            if ((slot & 0xFFFFFFFF00000000ULL) == high
                && memcmp(v->states + id * v->words, row, sizeof(uint64_t) * v->words) == 0) return id;
            h = (h + 1) & v->mask;
        }
    }
    *at = (int64_t)h;
    return -1;
}

/* For each of the n states of `rows` (n x words): marks[i] = 1 if it was added by this call (a new
 * state's first occurrence), 2 if it is new but the limit was reached (not added), 0 if it was seen;
 * where `ids` is not NULL, ids[i] = the state's id (-1 when not added). Returns the number added, or
 * -1 when memory ran out. */
int64_t visited_insert(visited_t *v, int64_t n, const uint64_t *rows, int64_t limit, uint8_t *marks, int32_t *ids) {
    int64_t before = v->count;
    for (int64_t i = 0; i < n; i++) {
        if (i + 8 < n) {  /* ask for the slot of a state a few rows ahead: lookups are memory-bound */
            uint64_t ahead = hash(rows + (i + 8) * v->words, v->words) & v->mask;
            __builtin_prefetch(v->slots + ahead * slot_words(v));
        }
        const uint64_t *row = rows + i * v->words;
        int64_t at, id = lookup(v, row, &at);
        if (id >= 0) { marks[i] = 0; if (ids) ids[i] = (int32_t)id; continue; }
        if (v->count >= limit) { marks[i] = 2; if (ids) ids[i] = -1; continue; }
        if (v->count >= v->room && grow_states(v)) return -1;
        memcpy(v->states + v->count * v->words, row, sizeof(uint64_t) * v->words);
        if (v->words == 1) {
            v->slots[2 * at] = row[0];
            v->slots[2 * at + 1] = (uint64_t)(v->count + 1);
        } else {
            v->slots[at] = (hash(row, v->words) & 0xFFFFFFFF00000000ULL) | (uint64_t)(v->count + 1);
        }
        marks[i] = 1;
        if (ids) ids[i] = (int32_t)v->count;
        v->count++;
        if (8 * v->count > 5 * (v->mask + 1) && grow_slots(v)) return -1;
    }
    return v->count - before;
}

int64_t visited_count(visited_t *v) { return v->count; }

/* The words of every state, in id order (valid until the next insert). */
const uint64_t *visited_states(visited_t *v) { return v->states; }
