/*
 * filter_types.h: what the body filters that rewrite a response
 * (sub_filter, ssi, addition) share: a *_types list of MIME types with its setter and
 * match, and the header changes a rewritten body needs.
 */
#ifndef RX_FILTER_TYPES_H
#define RX_FILTER_TYPES_H

#include "http.h"
#include "http_config.h"

/* A types list: lower-cased names, text/html always in it; any: "*". */
typedef struct {
    rx_array_t  *types;      /* rx_str_t; RX_CONF_UNSET_PTR until set */
    rx_int_t     any;
} rx_filter_types_t;

void rx_filter_types_init(rx_filter_types_t *t);
/* The setter of "NAME_types mime ...": the list at cmd->offset. */
const char *rx_filter_types_set(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);
/* Merge: the child's, else the parent's, else text/html alone. */
rx_int_t rx_filter_types_merge(rx_conf_t *cf, rx_filter_types_t *prev,
    rx_filter_types_t *conf);
/* Whether the response's Content-Type (without parameters) is listed. */
bool rx_filter_types_match(rx_http_request_t *r, const rx_filter_types_t *t);
/* The validators of a changed body: keep_validators keeps Last-Modified
 * and makes a strong ETag weak (nginx's ngx_http_weak_etag), else both
 * go. RX_OK or RX_ERROR. */
rx_int_t rx_filter_validators(rx_http_request_t *r, bool keep_validators);
/* The body changes: no Content-Length, no ranges, and the validators as
 * rx_filter_validators. RX_OK or RX_ERROR. */
rx_int_t rx_filter_body_changes(rx_http_request_t *r, bool keep_validators);

#endif /* RX_FILTER_TYPES_H */
