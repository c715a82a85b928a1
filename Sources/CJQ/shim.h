// libjq (Debian's jq 1.6) for Swift, loaded with dlopen: nothing here links libjq, so every
// command but a `--jq` filter's child process starts without mapping libjq and libonig (as CCurl
// does for libcurl). `cjq_load` fills a table of the functions the child calls; every call goes
// through the table. Only the child process `apimacro api` starts for a filter
// (MacroRuntime/Api/JQChild.swift) loads it: a filter can loop or allocate without end, so it
// never runs in the process that holds the user's tokens.
#ifndef CJQ_SHIM_H
#define CJQ_SHIM_H
#include <dlfcn.h>
#include <jq.h>
#include <stddef.h>
#include <stdio.h>

typedef struct cjq_api {
    jq_state *(*init)(void);
    void (*set_error_cb)(jq_state *state, jq_msg_cb callback, void *data);
    int (*compile)(jq_state *state, const char *program);
    void (*start)(jq_state *state, jv value, int flags);
    jv (*next)(jq_state *state);
    void (*teardown)(jq_state **state);
    int (*halted)(jq_state *state);
    jv (*get_exit_code)(jq_state *state);
    jv (*get_error_message)(jq_state *state);
    jv_kind (*get_kind)(jv value);
    jv (*copy)(jv value);
    void (*free)(jv value);
    int (*invalid_has_msg)(jv value);
    jv (*invalid_get_msg)(jv value);
    jv (*null)(void);
    double (*number_value)(jv number);
    jv (*array)(void);
    int (*array_length)(jv array);
    jv (*array_append)(jv array, jv value);
    jv (*array_concat)(jv array, jv other);
    jv (*string)(const char *text);
    jv (*string_sized)(const char *text, int length);
    const char *(*string_value)(jv string);
    int (*string_length_bytes)(jv string);
    jv (*getpath)(jv value, jv path);
    void (*dumpf)(jv value, FILE *file, int flags);
    jv (*dump_string)(jv value, int flags);
    jv_parser *(*parser_new)(int flags);
    void (*parser_set_buf)(jv_parser *parser, const char *buffer, int length, int partial);
    jv (*parser_next)(jv_parser *parser);
    void (*parser_free)(jv_parser *parser);
    void (*nomem_handler)(jv_nomem_handler_f handler, void *data);
    int (*set_colors)(const char *colors);
    void (*set_nomem_handler)(jq_state *state, void (*handler)(void *), void *data);
} cjq_api;

/// Opens `path` (e.g. "libjq.so.1") and fills `api`. Returns 0, or -1 when the library cannot be
/// opened, or -2 when a function is missing.
static inline int cjq_load(const char *path, cjq_api *api) {
    void *library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) return -1;
#define CJQ_LOAD(field, name) \
    api->field = (__typeof__(api->field))dlsym(library, name); \
    if (api->field == NULL) return -2;
    CJQ_LOAD(init, "jq_init")
    CJQ_LOAD(set_error_cb, "jq_set_error_cb")
    CJQ_LOAD(compile, "jq_compile")
    CJQ_LOAD(start, "jq_start")
    CJQ_LOAD(next, "jq_next")
    CJQ_LOAD(teardown, "jq_teardown")
    CJQ_LOAD(halted, "jq_halted")
    CJQ_LOAD(get_exit_code, "jq_get_exit_code")
    CJQ_LOAD(get_error_message, "jq_get_error_message")
    CJQ_LOAD(get_kind, "jv_get_kind")
    CJQ_LOAD(copy, "jv_copy")
    CJQ_LOAD(free, "jv_free")
    CJQ_LOAD(invalid_has_msg, "jv_invalid_has_msg")
    CJQ_LOAD(invalid_get_msg, "jv_invalid_get_msg")
    CJQ_LOAD(null, "jv_null")
    CJQ_LOAD(number_value, "jv_number_value")
    CJQ_LOAD(array, "jv_array")
    CJQ_LOAD(array_length, "jv_array_length")
    CJQ_LOAD(array_append, "jv_array_append")
    CJQ_LOAD(array_concat, "jv_array_concat")
    CJQ_LOAD(string, "jv_string")
    CJQ_LOAD(string_sized, "jv_string_sized")
    CJQ_LOAD(string_value, "jv_string_value")
    CJQ_LOAD(string_length_bytes, "jv_string_length_bytes")
    CJQ_LOAD(getpath, "jv_getpath")
    CJQ_LOAD(dumpf, "jv_dumpf")
    CJQ_LOAD(dump_string, "jv_dump_string")
    CJQ_LOAD(parser_new, "jv_parser_new")
    CJQ_LOAD(parser_set_buf, "jv_parser_set_buf")
    CJQ_LOAD(parser_next, "jv_parser_next")
    CJQ_LOAD(parser_free, "jv_parser_free")
    CJQ_LOAD(nomem_handler, "jv_nomem_handler")
    CJQ_LOAD(set_colors, "jq_set_colors")
    CJQ_LOAD(set_nomem_handler, "jq_set_nomem_handler")
#undef CJQ_LOAD
    return 0;
}


// Typed calls through the table (Swift sees each field as an optional pointer).
static inline jq_state * cjq_init(const cjq_api *api) { return api->init(); }
static inline void cjq_set_error_cb(const cjq_api *api, jq_state *state, jq_msg_cb callback, void *data) { api->set_error_cb(state, callback, data); }
static inline int cjq_compile(const cjq_api *api, jq_state *state, const char *program) { return api->compile(state, program); }
static inline void cjq_start(const cjq_api *api, jq_state *state, jv value, int flags) { api->start(state, value, flags); }
static inline jv cjq_next(const cjq_api *api, jq_state *state) { return api->next(state); }
static inline void cjq_teardown(const cjq_api *api, jq_state **state) { api->teardown(state); }
static inline int cjq_halted(const cjq_api *api, jq_state *state) { return api->halted(state); }
static inline jv cjq_get_exit_code(const cjq_api *api, jq_state *state) { return api->get_exit_code(state); }
static inline jv cjq_get_error_message(const cjq_api *api, jq_state *state) { return api->get_error_message(state); }
static inline jv_kind cjq_get_kind(const cjq_api *api, jv value) { return api->get_kind(value); }
static inline jv cjq_copy(const cjq_api *api, jv value) { return api->copy(value); }
static inline void cjq_free(const cjq_api *api, jv value) { api->free(value); }
static inline int cjq_invalid_has_msg(const cjq_api *api, jv value) { return api->invalid_has_msg(value); }
static inline jv cjq_invalid_get_msg(const cjq_api *api, jv value) { return api->invalid_get_msg(value); }
static inline jv cjq_null(const cjq_api *api) { return api->null(); }
static inline double cjq_number_value(const cjq_api *api, jv number) { return api->number_value(number); }
static inline jv cjq_array(const cjq_api *api) { return api->array(); }
static inline int cjq_array_length(const cjq_api *api, jv array) { return api->array_length(array); }
static inline jv cjq_array_append(const cjq_api *api, jv array, jv value) { return api->array_append(array, value); }
static inline jv cjq_array_concat(const cjq_api *api, jv array, jv other) { return api->array_concat(array, other); }
static inline jv cjq_string(const cjq_api *api, const char *text) { return api->string(text); }
static inline jv cjq_string_sized(const cjq_api *api, const char *text, int length) { return api->string_sized(text, length); }
static inline const char * cjq_string_value(const cjq_api *api, jv string) { return api->string_value(string); }
static inline int cjq_string_length_bytes(const cjq_api *api, jv string) { return api->string_length_bytes(string); }
static inline jv cjq_getpath(const cjq_api *api, jv value, jv path) { return api->getpath(value, path); }
static inline void cjq_dumpf(const cjq_api *api, jv value, FILE *file, int flags) { api->dumpf(value, file, flags); }
static inline jv cjq_dump_string(const cjq_api *api, jv value, int flags) { return api->dump_string(value, flags); }
static inline jv_parser * cjq_parser_new(const cjq_api *api, int flags) { return api->parser_new(flags); }
static inline void cjq_parser_set_buf(const cjq_api *api, jv_parser *parser, const char *buffer, int length, int partial) { api->parser_set_buf(parser, buffer, length, partial); }
static inline jv cjq_parser_next(const cjq_api *api, jv_parser *parser) { return api->parser_next(parser); }
static inline void cjq_parser_free(const cjq_api *api, jv_parser *parser) { api->parser_free(parser); }
static inline void cjq_nomem_handler(const cjq_api *api, jv_nomem_handler_f handler, void *data) { api->nomem_handler(handler, data); }
static inline int cjq_set_colors(const cjq_api *api, const char *colors) { return api->set_colors(colors); }
static inline void cjq_set_nomem_handler(const cjq_api *api, jq_state *state, void (*handler)(void *), void *data) { api->set_nomem_handler(state, handler, data); }

/// jq's pretty-printing flags with an indent of `spaces` (the JV_PRINT_INDENT_FLAGS macro).
static inline int cjq_indent_flags(int spaces) { return JV_PRINT_INDENT_FLAGS(spaces); }
#endif
