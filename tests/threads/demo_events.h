/* demo_events.h - deterministic Mantra-Demo events for the threaded tests (tests/threads/).
 *
 * Writer w (0..15) writes its events with an index i = 0, 1, 2, ...: event id 1 + i % 4 (Tick,
 * Scalars, Strings, Arrays), every field value a function of (w, i) only, and (w, i) recoverable
 * from the payload (demo_key), so a reader can rebuild the exact payload the writer meant
 * (demo_payload) and compare it byte for byte. Indices must stay below 2^28 (Strings and Arrays
 * carry w and i packed into 32 bits).
 *
 * What the nettrace metadata of each event describes (generated/dotnet_registry.c): Tick and
 * Scalars every field; Strings Wide and Length (Narrow is an AnsiString, manifest-only); Arrays N
 * (Values is a counted array). demo_json_fields() prints exactly those fields, demo_json_all_fields()
 * all of them. */
#ifndef MANTRA_TESTS_DEMO_EVENTS_H
#define MANTRA_TESTS_DEMO_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "mantra/event.h"

#define DEMO_PROVIDER "Mantra-Demo"
#define DEMO_MAX_INDEX (UINT64_C(1) << 28)
#define DEMO_MAX_PAYLOAD 512u

typedef struct demo_event {
    uint32_t id; /* 1 Tick, 2 Scalars, 3 Strings, 4 Arrays */
    uint32_t w;
    uint64_t i;
    /* Scalars */
    int8_t I8;
    uint8_t U8;
    int16_t I16;
    uint16_t U16;
    int32_t I32;
    uint32_t U32;
    int64_t I64;
    uint64_t U64;
    float F32;
    double F64;
    bool Flag;
    mantra_guid Id;
    uintptr_t Address;
    uint64_t When;
    /* Strings */
    char wide[96];
    uint32_t length;
    char narrow[96];
    /* Arrays */
    uint16_t n;
    uint32_t values[8];
    uint32_t size;
    uint8_t blob[8];
    uint32_t count;
    uint8_t items[3 * (8 + 2 * 8)];
    size_t items_size;
} demo_event;

/* The event writer w writes at index i. */
void demo_make(demo_event *e, uint32_t w, uint64_t i);
/* Writes it with the generated writer; returns the writer's status (enum mantra_write_status). */
int demo_write(const demo_event *e);
/* The payload the writer produces, into out; its size, or a negative value on failure. */
int64_t demo_payload(const demo_event *e, uint8_t *out, size_t cap);
/* (w, i) of a payload of event id; 0, or -1 when the payload is too short or malformed. */
int demo_key(uint32_t id, const uint8_t *payload, size_t size, uint32_t *w, uint64_t *i);
/* The event's name in the manifest ("Tick", ...), NULL for an unknown id. */
const char *demo_name(uint32_t id);
/* The described fields as a JSON object body ("\"Thread\":0,\"Index\":4"), in the conventions of
 * docs/dump-json.md (Single %.9g, Double %.17g, NaN/Infinity as strings, GUID lower case,
 * DateTime as FILETIME). */
void demo_json_fields(const demo_event *e, FILE *out);
/* Every field of the manifest's template, as `mantra dump --json --manifest manifest/dotnet.yaml`
 * prints them (Binary as hex, counted arrays as arrays, the struct array as objects). */
void demo_json_all_fields(const demo_event *e, FILE *out);

#endif
