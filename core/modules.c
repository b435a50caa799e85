/*
 * modules.c: every module, in the order that matters. Directive lookup
 * walks this list; HTTP phase handlers are registered in this order, and
 * the output filters see a response in this order (a filter listed
 * earlier sees it first: http_response.c builds the chains from the end
 * of this list), so the order is written here once, by hand.
 */
#include "core.h"
#include "cycle.h"
#include "event.h"
#include "tls.h"

extern rx_module_t rx_event_core_module;
extern rx_module_t rx_http_module;
extern rx_module_t rx_http_core_module;
extern rx_module_t rx_http_variables_module;
extern rx_module_t rx_http_open_file_module;
extern rx_module_t rx_http_log_module;
extern rx_module_t rx_http_ssl_module;
extern rx_module_t rx_http_realip_module;
extern rx_module_t rx_http_geo_module;
extern rx_module_t rx_http_map_module;
extern rx_module_t rx_http_split_clients_module;
extern rx_module_t rx_http_referer_module;
extern rx_module_t rx_http_dav_module;
extern rx_module_t rx_http_stub_status_module;
extern rx_module_t rx_http_metrics_module;
extern rx_module_t rx_http_rewrite_module;
extern rx_module_t rx_http_limit_req_module;
extern rx_module_t rx_http_limit_conn_module;
extern rx_module_t rx_http_access_module;
extern rx_module_t rx_http_auth_basic_module;
extern rx_module_t rx_http_auth_request_module;
extern rx_module_t rx_http_headers_module;
extern rx_module_t rx_http_userid_module;
extern rx_module_t rx_http_gunzip_module;
extern rx_module_t rx_http_sub_filter_module;
extern rx_module_t rx_http_addition_filter_module;
extern rx_module_t rx_http_slice_filter_module;
extern rx_module_t rx_http_ssi_filter_module;
extern rx_module_t rx_http_postpone_filter_module;
extern rx_module_t rx_http_charset_module;
extern rx_module_t rx_http_gzip_module;
extern rx_module_t rx_http_try_files_module;
extern rx_module_t rx_http_mirror_module;
extern rx_module_t rx_http_index_module;
extern rx_module_t rx_http_autoindex_module;
extern rx_module_t rx_http_gzip_static_module;
extern rx_module_t rx_http_static_module;
extern rx_module_t rx_http_upstream_module;
extern rx_module_t rx_http_upstream_hash_module;
extern rx_module_t rx_http_upstream_least_conn_module;
extern rx_module_t rx_http_upstream_random_module;
extern rx_module_t rx_http_proxy_module;
extern rx_module_t rx_http_proxy_ssl_module;
extern rx_module_t rx_http_fastcgi_module;
extern rx_module_t rx_http_uwsgi_module;
extern rx_module_t rx_http_scgi_module;
extern rx_module_t rx_http_memcached_module;
extern rx_module_t rx_http_empty_gif_module;
extern rx_module_t rx_http_browser_module;
extern rx_module_t rx_http_secure_link_module;
extern rx_module_t rx_http_chunked_filter_module;
extern rx_module_t rx_http_v2_module;

rx_module_t *const rx_modules[] = {
    /* core: top-level directives and blocks */
    &rx_core_module,
    &rx_errlog_module,
    &rx_events_module,
    &rx_http_module,
    /* event */
    &rx_event_core_module,
    /* http */
    &rx_http_core_module,
    &rx_http_variables_module,  /* the $variable registry, core variables */
    &rx_http_open_file_module,  /* open_file_cache, disable_symlinks */
    &rx_http_log_module,        /* access_log, log_format */
#if (RX_HAVE_OPENSSL)
    &rx_http_ssl_module,        /* ssl_*, listen ... ssl, $ssl_* */
#endif
    &rx_http_v2_module,         /* http2, http2_*, $http2 */
    &rx_http_upstream_module,   /* upstream {}, $upstream_* */
    &rx_http_upstream_hash_module,          /* hash, ip_hash */
    &rx_http_upstream_least_conn_module,
    &rx_http_upstream_random_module,
    /* post-read and preaccess phases: the client behind a proxy */
    &rx_http_realip_module,
    /* variables defined by blocks (nginx's order) */
#if (RX_HTTP_GEO)
    &rx_http_geo_module,
#endif
#if (RX_HTTP_MAP)
    &rx_http_map_module,
#endif
#if (RX_HTTP_SPLIT_CLIENTS)
    &rx_http_split_clients_module,
#endif
#if (RX_HTTP_REFERER)
    &rx_http_referer_module,    /* valid_referers, $invalid_referer */
#endif
#if (RX_HTTP_REWRITE)
    &rx_http_rewrite_module,
#endif
    /* preaccess phase, in nginx's order: limit_req, then limit_conn (a
     * request limit_req refuses takes no connection slot) */
#if (RX_HTTP_LIMIT_REQ)
    &rx_http_limit_req_module,
#endif
#if (RX_HTTP_LIMIT_CONN)
    &rx_http_limit_conn_module,
#endif
    /* access phase, in nginx's order: allow/deny, auth_basic, then
     * auth_request (the subrequest last: with "satisfy any" a cheaper
     * check that allows spares it) */
#if (RX_HTTP_ACCESS)
    &rx_http_access_module,
#endif
#if (RX_HTTP_AUTH_BASIC)
    &rx_http_auth_basic_module,
#endif
    &rx_http_auth_request_module,
    /* filter: slice, first to see a response (nginx's last filter module) */
    &rx_http_slice_filter_module,
    &rx_http_headers_module,
    /* nginx's filter order from here: userid, gunzip, sub, charset, gzip */
#if (RX_HTTP_USERID)
    &rx_http_userid_module,     /* filter: Set-Cookie; $uid_got, $uid_set */
#endif
#if (RX_HTTP_GUNZIP && RX_HTTP_GZIP)
    &rx_http_gunzip_module,     /* filter: inflates for clients without gzip */
#endif
    &rx_http_addition_filter_module, /* filter: add_before/after_body */
#if (RX_HTTP_SUB)
    &rx_http_sub_filter_module, /* filter: sub_filter, before charset/gzip */
#endif
    &rx_http_charset_module,    /* filter: after headers, before gzip */
    &rx_http_ssi_filter_module, /* filter: ssi, above postpone (includes) */
    &rx_http_postpone_filter_module, /* filter: subrequests' bodies in order */
#if (RX_HTTP_GZIP)
    &rx_http_gzip_module,       /* filter: after headers, before chunked */
#endif
    &rx_http_chunked_filter_module, /* filter: the last before the writer */
    &rx_http_try_files_module,  /* precontent phase */
    /* precontent, after try_files (nginx runs it after too): the last
     * handler of the phase, so its body wait resumes at content */
    &rx_http_mirror_module,
    /* content handlers, tried in this order */
#if (RX_HTTP_DAV)
    &rx_http_dav_module,        /* PUT DELETE MKCOL COPY MOVE: before static */
#endif
    &rx_http_index_module,
    &rx_http_autoindex_module,  /* '/' URIs that index did not serve */
#if (RX_HTTP_GZIP)
    &rx_http_gzip_static_module, /* FILE.gz for FILE, before static */
#endif
    &rx_http_static_module,
#if (RX_HTTP_PROXY)
    &rx_http_proxy_module,      /* a location's handler (proxy_pass) */
#endif
#if (RX_HTTP_PROXY && RX_HAVE_OPENSSL)
    &rx_http_proxy_ssl_module,  /* proxy_ssl_*: proxy_pass https:// */
#endif
#if (RX_HTTP_FASTCGI)
    &rx_http_fastcgi_module,    /* a location's handler (fastcgi_pass) */
#endif
    &rx_http_uwsgi_module,      /* a location's handler (uwsgi_pass) */
    &rx_http_scgi_module,       /* a location's handler (scgi_pass) */
    &rx_http_memcached_module,  /* a location's handler (memcached_pass) */
    /* nginx's small modules, in its order */
#if (RX_HTTP_EMPTY_GIF)
    &rx_http_empty_gif_module,  /* a location's handler (empty_gif) */
#endif
#if (RX_HTTP_BROWSER)
    &rx_http_browser_module,    /* $modern_browser, $ancient_browser, $msie */
#endif
#if (RX_HTTP_SECURE_LINK)
    &rx_http_secure_link_module, /* $secure_link, $secure_link_expires */
#endif
#if (RX_HTTP_STUB_STATUS)
    &rx_http_stub_status_module,
#endif
    &rx_http_metrics_module,    /* log phase: counts; `metrics` handler */
};

const rx_uint_t rx_modules_n = rx_nelems(rx_modules);

const rx_build_tls_t rx_build_tls = {
    rx_tls_version_text, rx_tls_runtime_version_text
};

/* For -V: optional modules compiled in, and nginx's standard modules that
 * ringx does not have (so that scripts parsing -V see the truth). */
const rx_module_flag_t rx_module_flags[] = {
    /* nginx's optional modules: "--with-" when compiled in */
    { "http_ssl_module", RX_HAVE_OPENSSL, false },
    { "http_stub_status_module", RX_HTTP_STUB_STATUS, false },
    { "http_gzip_static_module", RX_HTTP_GZIP, false },
    { "http_realip_module", true, false },
    { "http_dav_module", RX_HTTP_DAV, false },
    { "http_sub_module", RX_HTTP_SUB, false },
    { "http_gunzip_module", RX_HTTP_GUNZIP && RX_HTTP_GZIP, false },
    { "http_auth_request_module", true, false },
    { "http_addition_module", true, false },
    { "http_slice_module", true, false },
    /* nginx's standard modules: "--without-" when ringx lacks them */
    { "http_rewrite_module", RX_HTTP_REWRITE, true },
    { "http_gzip_module", RX_HTTP_GZIP, true },
    { "http_proxy_module", RX_HTTP_PROXY, true },
    { "http_fastcgi_module", RX_HTTP_FASTCGI, true },
    { "http_uwsgi_module", true, true },
    { "http_scgi_module", true, true },
    { "http_ssi_module", true, true },
    { "http_userid_module", RX_HTTP_USERID, true },
    { "http_mirror_module", true, true },
    { "http_memcached_module", true, true },
    { "http_empty_gif_module", RX_HTTP_EMPTY_GIF, true },
    { "http_secure_link_module", RX_HTTP_SECURE_LINK, false },
    { "http_browser_module", RX_HTTP_BROWSER, true },
    { "http_grpc_module", false, true },
    { "http_geo_module", RX_HTTP_GEO, true },
    { "http_map_module", RX_HTTP_MAP, true },
    { "http_split_clients_module", RX_HTTP_SPLIT_CLIENTS, true },
    { "http_referer_module", RX_HTTP_REFERER, true },
    { "http_auth_basic_module", RX_HTTP_AUTH_BASIC, true },
    { "http_autoindex_module", true, true },
    { "http_access_module", RX_HTTP_ACCESS, true },
    { "http_limit_conn_module", RX_HTTP_LIMIT_CONN, true },
    { "http_limit_req_module", RX_HTTP_LIMIT_REQ, true },
    { "http_upstream_hash_module", true, true },
    { "http_upstream_ip_hash_module", true, true },
    { "http_upstream_least_conn_module", true, true },
    { "http_upstream_random_module", true, true },
    { "http_upstream_keepalive_module", RX_HTTP_PROXY || RX_HTTP_FASTCGI, true },
    { "http_upstream_zone_module", false, true },
    { NULL, false, false }
};

/*
 * Modules that act only through their directives: with none of them in a
 * configuration (in no http, server or location block) the module's conf
 * is its default everywhere, and there its phase handlers decline and its
 * filters pass the response on untouched. Such a cycle leaves them out
 * (http_block.c skips the postconfiguration, http_response.c the
 * init_filters), so a request pays nothing for them; a cycle that names
 * one directive of a module anywhere keeps all of it, with its per-request
 * check of the location's conf. Their variables work without them
 * ($realip_remote_addr, $limit_req_status, $slice_range, $uid_got ...
 * read the request or the conf, not state the handler leaves). An entry
 * here must have a postconfiguration that only registers handlers.
 * Not listed, they act with no directive of theirs: index, static,
 * access_log (on by default), metrics (decides itself), postpone
 * (subrequests), chunked.
 */
static rx_module_t *const on_demand[] = {
    &rx_http_realip_module,     /* from: no address is trusted */
#if (RX_HTTP_REWRITE)
    &rx_http_rewrite_module,    /* no script */
#endif
#if (RX_HTTP_LIMIT_REQ)
    &rx_http_limit_req_module,  /* no limit_req */
#endif
#if (RX_HTTP_LIMIT_CONN)
    &rx_http_limit_conn_module, /* no limit_conn */
#endif
#if (RX_HTTP_ACCESS)
    &rx_http_access_module,     /* no allow/deny rules */
#endif
#if (RX_HTTP_AUTH_BASIC)
    &rx_http_auth_basic_module, /* no realm */
#endif
    &rx_http_auth_request_module, /* no uri */
    &rx_http_slice_filter_module, /* slice 0: no $slice_range context */
    &rx_http_headers_module,    /* no add_header, expires, add_trailer */
#if (RX_HTTP_USERID)
    &rx_http_userid_module,     /* userid off */
#endif
#if (RX_HTTP_GUNZIP && RX_HTTP_GZIP)
    &rx_http_gunzip_module,     /* gunzip off */
#endif
    &rx_http_addition_filter_module, /* nothing to add */
#if (RX_HTTP_SUB)
    &rx_http_sub_filter_module, /* no pairs */
#endif
    &rx_http_charset_module,    /* charset off */
    &rx_http_ssi_filter_module, /* ssi off */
#if (RX_HTTP_GZIP)
    &rx_http_gzip_module,       /* gzip off */
#endif
    &rx_http_try_files_module,  /* no try_files */
    &rx_http_mirror_module,     /* no mirror */
#if (RX_HTTP_DAV)
    &rx_http_dav_module,        /* dav_methods off */
#endif
    &rx_http_autoindex_module,  /* autoindex off */
#if (RX_HTTP_GZIP)
    &rx_http_gzip_static_module, /* gzip_static off */
#endif
};

void
rx_modules_preinit(void)
{
    rx_uint_t i, core = 0, event = 0, http = 0;

    for (i = 0; i < rx_nelems(on_demand); i++) {
        on_demand[i]->on_demand = true;
    }

    for (i = 0; i < rx_modules_n; i++) {
        rx_modules[i]->index = i;
        switch (rx_modules[i]->type) {
        case RX_CORE_MODULE:  rx_modules[i]->ctx_index = core++; break;
        case RX_EVENT_MODULE: rx_modules[i]->ctx_index = event++; break;
        case RX_HTTP_MODULE:  rx_modules[i]->ctx_index = http++; break;
        }
    }
}

void
rx_modules_reopen(rx_cycle_t *cycle)
{
    rx_uint_t i;

    for (i = 0; i < rx_modules_n; i++) {
        if (rx_modules[i]->reopen) {
            rx_modules[i]->reopen(cycle);
        }
    }
}

rx_uint_t
rx_modules_count(unsigned type)
{
    rx_uint_t i, n = 0;

    for (i = 0; i < rx_modules_n; i++) {
        n += rx_modules[i]->type == type;
    }
    return n;
}

bool
rx_module_active(const rx_cycle_t *cycle, const rx_module_t *m)
{
    return !m->on_demand || cycle == NULL || cycle->modules_used == NULL
           || cycle->modules_used[m->index];
}
